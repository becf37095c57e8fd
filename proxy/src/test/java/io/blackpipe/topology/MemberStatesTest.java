package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bson.BsonDocument;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * What a member's topologyVersion looks like to clients: one processId per member (jongodb gives
 * hello and isMaster one each), and after an injected state-change error, an error one newer than
 * what drivers held and hellos one newer still.
 */
class MemberStatesTest {
    private static final MemberAddress MEMBER = MemberAddress.parse("a:27017");
    private static final String HELLO_PID = "0102030405060708090a0b0c";
    private static final String LEGACY_PID = "0102030405060708090a0b0d";

    private final MemberStates states = new MemberStates();

    private static BsonDocument reply(String processId, long counter) {
        return BsonDocument.parse("{isWritablePrimary: true, ismaster: true, topologyVersion: {processId: {$oid: '" + processId
                + "'}, counter: {$numberLong: '" + counter + "'}}, maxWireVersion: 21, ok: 1.0}");
    }

    private static BsonDocument request(String command, String processId, long counter) {
        return BsonDocument.parse("{" + command + ": 1, topologyVersion: {processId: {$oid: '" + processId + "'}, counter: {$numberLong: '"
                + counter + "'}}, maxAwaitTimeMS: 10000, $db: 'admin'}");
    }

    private static String processIdOf(BsonDocument document) {
        return document.getDocument("topologyVersion").getObjectId("processId").getValue().toHexString();
    }

    private static long counterOf(BsonDocument document) {
        return document.getDocument("topologyVersion").getNumber("counter").longValue();
    }

    @Test
    void aMemberWithOneProcessIdPassesAsItCameUntilAShift() {
        states.observe(MEMBER, reply(HELLO_PID, 6), false);
        states.observe(MEMBER, reply(HELLO_PID, 6), true);
        assertFalse(states.versionsRewritten(MEMBER));
        BsonDocument legacy = reply(HELLO_PID, 6);
        assertFalse(states.shiftReply(MEMBER, legacy));
        assertFalse(states.unshiftRequest(MEMBER, request("isMaster", HELLO_PID, 6)));
        assertEquals(new ObjectId(HELLO_PID), states.of(MEMBER).processId());
    }

    /**
     * Errors not announced yet to held hellos: whatever a driver holds (the version from before them, an error's own, a
     * reply shifted in full), its awaitable hello reaches the member with a counter no greater than the member's own
     * (5 here), which the member holds. A reviewer saw two errors in 100 ms, then one announced, send the member 7
     * (mongod refuses that, 31382: an error and a pool clear at the driver no rule made).
     */
    @Test
    void anAwaitableHelloNeverReachesTheMemberPastItsOwnCounterWhileErrorsAreUnannounced() {
        states.observe(MEMBER, reply(HELLO_PID, 5), false);
        BsonDocument first = states.newerUnannounced(MEMBER);
        BsonDocument second = states.newerUnannounced(MEMBER);
        assertEquals(6, counterOf(new BsonDocument("topologyVersion", first)));
        assertEquals(8, counterOf(new BsonDocument("topologyVersion", second)));
        for (int announcedSoFar = 0; announcedSoFar <= 2; announcedSoFar++) {
            BsonDocument replied = reply(HELLO_PID, 5);
            states.shiftReply(MEMBER, replied);
            for (long held : new long[] {5, 6, 7, 8, counterOf(replied)}) {
                BsonDocument awaitable = request("hello", HELLO_PID, held);
                states.unshiftRequest(MEMBER, awaitable);
                assertTrue(counterOf(awaitable) <= 5, () -> "a driver holding " + held + " sent the member " + counterOf(awaitable));
            }
            BsonDocument current = request("hello", HELLO_PID, counterOf(replied));
            states.unshiftRequest(MEMBER, current);
            assertEquals(5, counterOf(current), "the version replies carry is the member's own, held");
            states.announced(MEMBER);
        }
    }

    @Test
    void legacyRepliesShowHellosProcessIdAndLegacyRequestsGetTheirOwnBack() {
        states.observe(MEMBER, reply(HELLO_PID, 1), false);
        states.observe(MEMBER, reply(LEGACY_PID, 1), true);
        assertTrue(states.versionsRewritten(MEMBER), "two processIds: replies and requests are rewritten");
        assertEquals(new ObjectId(HELLO_PID), states.of(MEMBER).processId(), "the state a legacy reply left names hello's");

        BsonDocument legacy = reply(LEGACY_PID, 1);
        assertTrue(states.shiftReply(MEMBER, legacy));
        assertEquals(HELLO_PID, processIdOf(legacy));
        BsonDocument hello = reply(HELLO_PID, 1);
        assertFalse(states.shiftReply(MEMBER, hello), "hello's own pass as they came");

        BsonDocument awaitableIsMaster = request("isMaster", HELLO_PID, 1);
        assertTrue(states.unshiftRequest(MEMBER, awaitableIsMaster));
        assertEquals(LEGACY_PID, processIdOf(awaitableIsMaster), "the member reads its legacy processId");
        BsonDocument awaitableHello = request("hello", HELLO_PID, 1);
        assertFalse(states.unshiftRequest(MEMBER, awaitableHello));
        assertEquals(HELLO_PID, processIdOf(awaitableHello));

        BsonDocument error = states.topologyVersion(MEMBER, true);
        assertEquals(HELLO_PID, error.getObjectId("processId").getValue().toHexString(),
                "an injected error names the processId drivers follow, whichever reply came last");
        BsonDocument shiftedLegacy = reply(LEGACY_PID, 1);
        states.shiftReply(MEMBER, shiftedLegacy);
        assertEquals(HELLO_PID, processIdOf(shiftedLegacy));
        assertEquals(3, counterOf(shiftedLegacy), "renamed, then shifted");
    }

    @Test
    void aRestartedProcessIsNoAlias() {
        states.observe(MEMBER, reply(HELLO_PID, 1), false);
        states.observe(MEMBER, reply(HELLO_PID, 1), true);
        String restarted = "0102030405060708090a0b0e";
        states.observe(MEMBER, reply(restarted, 0), false);
        states.observe(MEMBER, reply(restarted, 0), true);
        assertFalse(states.versionsRewritten(MEMBER), "hello and isMaster agree again");
        assertEquals(new ObjectId(restarted), states.of(MEMBER).processId());
    }

    @Test
    void anInjectedErrorIsOneNewerAndTheMembersHellosOneNewerStill() {
        states.observe(MEMBER, reply(HELLO_PID, 6));
        assertEquals(6, states.topologyVersion(MEMBER, false).getNumber("counter").longValue(), "current: what drivers hold");
        assertEquals(7, states.topologyVersion(MEMBER, true).getNumber("counter").longValue(), "newer: the stepdown it announces");
        BsonDocument hello = reply(HELLO_PID, 6);
        assertTrue(states.shiftReply(MEMBER, hello));
        assertEquals(8, counterOf(hello), "the member as it still is: elected again at once");
        assertEquals(8, states.topologyVersion(MEMBER, false).getNumber("counter").longValue());
        assertEquals(9, states.topologyVersion(MEMBER, true).getNumber("counter").longValue());

        BsonDocument knowsTheError = request("hello", HELLO_PID, 9);
        assertTrue(states.unshiftRequest(MEMBER, knowsTheError));
        assertEquals(5, counterOf(knowsTheError), "older than the member's 6: a server answers it at once");
    }

    @Test
    void aMemberBlackpipeRestartedIsANewProcessToItsClients() {
        states.observe(MEMBER, reply(HELLO_PID, 6));
        states.topologyVersion(MEMBER, true); // an injected error shifted the member's counter by two
        BsonDocument exitError = states.topologyVersion(MEMBER, true);
        assertEquals(HELLO_PID, exitError.getObjectId("processId").getValue().toHexString(), "the exit's errors: the old process's");

        states.restarted(MEMBER);
        assertTrue(states.versionsRewritten(MEMBER));
        BsonDocument hello = reply(HELLO_PID, 6);
        assertTrue(states.shiftReply(MEMBER, hello));
        String shown = processIdOf(hello);
        assertFalse(shown.equals(HELLO_PID), "a processId the member's clients never saw");
        assertEquals(6, counterOf(hello), "the new process's counter, without the old one's shift");
        assertEquals(shown, states.topologyVersion(MEMBER, true).getObjectId("processId").getValue().toHexString(),
                "an injected error names the new process");
        BsonDocument error = BsonDocument.parse("{ok: 0.0, code: 10107, topologyVersion: {processId: {$oid: '" + HELLO_PID
                + "'}, counter: {$numberLong: '6'}}}");
        states.shiftReply(MEMBER, error);
        assertEquals(shown, processIdOf(error), "and so does the member's own error");

        BsonDocument awaitable = BsonDocument.parse("{hello: 1, topologyVersion: {processId: {$oid: '" + shown
                + "'}, counter: {$numberLong: '7'}}, maxAwaitTimeMS: 10000, $db: 'admin'}");
        assertTrue(states.unshiftRequest(MEMBER, awaitable));
        assertEquals(HELLO_PID, processIdOf(awaitable), "the member reads its own processId");
        assertEquals(5, counterOf(awaitable), "and its own counter: the shift the injected error began");

        BsonDocument stale = request("hello", HELLO_PID, 6);
        assertTrue(states.unshiftRequest(MEMBER, stale));
        String asked = processIdOf(stale);
        assertFalse(asked.equals(HELLO_PID) || asked.equals(shown), "the old process's: one the member never had, answered at once");

        states.restarted(MEMBER);
        BsonDocument again = reply(HELLO_PID, 6);
        states.shiftReply(MEMBER, again);
        assertFalse(processIdOf(again).equals(shown) || processIdOf(again).equals(HELLO_PID), "each restart, a new process");
    }
}
