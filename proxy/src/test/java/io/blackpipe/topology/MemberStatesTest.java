package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
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

    /** Once shifted, the member's own error replies gain the shift and its awaitable hellos lose it: a shift alone is a rewrite. */
    @Test
    void aShiftAloneMakesTheMembersVersionsRewritten() {
        states.observe(MEMBER, reply(HELLO_PID, 6), false);
        states.topologyVersion(MEMBER, true);
        assertTrue(states.versionsRewritten(MEMBER));
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
        BsonDocument clocked = reply(LEGACY_PID, 1).append("$clusterTime", BsonDocument.parse("{clusterTime: {$timestamp: {t: 7, i: 3}}}"))
                .append("operationTime", new org.bson.BsonTimestamp(7, 3));
        states.observe(MEMBER, clocked, true);
        assertEquals(new BsonDocument("$clusterTime", clocked.get("$clusterTime")).append("operationTime", clocked.get("operationTime")),
                states.of(MEMBER).times(), "and keeps the clock the legacy reply carried, which its errors end with");

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

    // ---- found by mutation testing: each pins what a surviving mutant changed unseen

    /**
     * Two errors unannounced (the member's own counter 5, shifted by 4): a reply is shifted in full, and an awaitable
     * hello is unshifted by what the driver's monitor can have heard. Each announcement takes back one error's worth:
     * after the first, a driver still holding the version from before both is answered at once (3, older than the
     * member's 5), one holding the second error's is held; after both, the full shift is taken back.
     */
    @Test
    void eachAnnouncementTakesBackOneErrorsWorthOfTheRequestsUnshift() {
        states.observe(MEMBER, reply(HELLO_PID, 5), false);
        states.newerUnannounced(MEMBER);
        states.newerUnannounced(MEMBER);
        BsonDocument replied = reply(HELLO_PID, 5);
        assertTrue(states.shiftReply(MEMBER, replied));
        assertEquals(9, counterOf(replied), "a reply is shifted in full, announced or not");

        assertEquals(5, unshifted(5), "both unannounced: the version from before them is held");
        assertEquals(5, unshifted(8));
        states.announced(MEMBER);
        assertEquals(3, unshifted(5), "one announced: from before both, answered at once");
        assertEquals(5, unshifted(8), "the second error's, not announced yet: held");
        states.announced(MEMBER);
        assertEquals(1, unshifted(5));
        assertEquals(4, unshifted(8));
        assertEquals(5, unshifted(9), "the replies' version: current, held");
        states.announced(MEMBER);
        assertEquals(1, unshifted(5), "an announcement more than the errors changes nothing");
    }

    private long unshifted(long held) {
        BsonDocument awaitable = request("hello", HELLO_PID, held);
        states.unshiftRequest(MEMBER, awaitable);
        return counterOf(awaitable);
    }

    /**
     * The shift belongs to the process it began with: a member restarted by someone other than blackpipe (a new processId)
     * has its own counter shown as it is, and its first injected error starts a shift of its own.
     */
    @Test
    void aMemberRestartedElsewhereStartsItsShiftAfresh() {
        String newProcess = "0102030405060708090a0b0f";
        states.observe(MEMBER, reply(HELLO_PID, 6), false);
        assertEquals(7, states.topologyVersion(MEMBER, true).getNumber("counter").longValue());
        states.observe(MEMBER, reply(newProcess, 0), false);
        BsonDocument current = states.topologyVersion(MEMBER, false);
        assertEquals(newProcess, current.getObjectId("processId").getValue().toHexString());
        assertEquals(0, current.getNumber("counter").longValue(), "the old process's shift does not apply");
        BsonDocument unshiftedYet = reply(newProcess, 0);
        assertFalse(states.shiftReply(MEMBER, unshiftedYet));
        assertEquals(0, counterOf(unshiftedYet));

        assertEquals(1, states.topologyVersion(MEMBER, true).getNumber("counter").longValue());
        BsonDocument shifted = reply(newProcess, 0);
        assertTrue(states.shiftReply(MEMBER, shifted));
        assertEquals(2, counterOf(shifted), "the new process's shift: 2, not the old one's 2 more");
    }

    /** After blackpipe's restart, a member that really comes back as another process is shown as it is. */
    @Test
    void aMemberThatComesBackAsAnotherProcessAfterBlackpipesRestartIsShownItsOwn() {
        String newProcess = "0102030405060708090a0b0f";
        states.observe(MEMBER, reply(HELLO_PID, 6), false);
        states.restarted(MEMBER);
        states.observe(MEMBER, reply(newProcess, 0), false);
        assertEquals(newProcess, states.topologyVersion(MEMBER, false).getObjectId("processId").getValue().toHexString());
        BsonDocument hello = reply(newProcess, 0);
        states.shiftReply(MEMBER, hello);
        assertEquals(newProcess, processIdOf(hello));
    }

    /**
     * A driver current with a member whose own counter is 0 sends 2 after a shift of 2: the member's own 0, held; not a
     * processId the member never had (answered at once, again and again).
     */
    @Test
    void anUnshiftToExactlyZeroKeepsTheProcessId() {
        states.observe(MEMBER, reply(HELLO_PID, 0), false);
        states.topologyVersion(MEMBER, true);
        BsonDocument awaitable = request("hello", HELLO_PID, 2);
        assertTrue(states.unshiftRequest(MEMBER, awaitable));
        assertEquals(0, counterOf(awaitable));
        assertEquals(HELLO_PID, processIdOf(awaitable));
    }

    /** A 4.2 server's hellos carry no topologyVersion, and a member may not have answered yet: nothing to shift, no error's version. */
    @Test
    void aMemberWithoutATopologyVersionGetsNoneAndNothingRewritten() {
        MemberAddress unseen = MemberAddress.parse("b:27017");
        assertNull(states.topologyVersion(unseen, false));
        assertFalse(states.versionsRewritten(unseen));

        states.observe(MEMBER, BsonDocument.parse("{ismaster: true, maxWireVersion: 8, ok: 1.0}"), false);
        states.observe(MEMBER, BsonDocument.parse("{ismaster: true, maxWireVersion: 8, ok: 1.0}"), true);
        assertNull(states.topologyVersion(MEMBER, false));
        assertNull(states.topologyVersion(MEMBER, true));
        assertNull(states.newerUnannounced(MEMBER));
        assertNull(states.nextTopologyVersion(MEMBER));
        states.restarted(MEMBER);
        assertFalse(states.versionsRewritten(MEMBER), "a restart of a member without one does nothing");
        BsonDocument error = BsonDocument.parse("{ok: 0.0, code: 10107, codeName: 'NotWritablePrimary'}");
        assertFalse(states.shiftReply(MEMBER, error));
        BsonDocument isMaster = BsonDocument.parse("{isMaster: 1, $db: 'admin'}");
        assertFalse(states.unshiftRequest(MEMBER, isMaster));
        assertEquals(BsonDocument.parse("{isMaster: 1, $db: 'admin'}"), isMaster);

        states.observe(MEMBER, reply(HELLO_PID, 3), false); // upgraded, or its first hello with one
        assertEquals(HELLO_PID, states.topologyVersion(MEMBER, false).getObjectId("processId").getValue().toHexString());
        assertEquals(3, states.topologyVersion(MEMBER, false).getNumber("counter").longValue(), "no shift was counted before it had one");
        states.topologyVersion(MEMBER, true);
        assertEquals(2, unshifted(4), "nor an unannounced error: a driver holding the error's version is answered at once");
    }

    /** Drivers handshake with legacy isMaster: a member first seen through it has a topologyVersion for injected errors at once. */
    @Test
    void aMemberFirstSeenThroughALegacyReplyHasItsTopologyVersion() {
        states.observe(MEMBER, reply(LEGACY_PID, 4), true);
        assertEquals(new ObjectId(LEGACY_PID), states.of(MEMBER).processId());
        assertEquals(5, states.topologyVersion(MEMBER, true).getNumber("counter").longValue());
    }

    /** The member's own error replies, and any odd topologyVersion, pass as they came while the member's versions are rewritten. */
    @Test
    void repliesWithoutAUsableTopologyVersionPassUntouched() {
        states.observe(MEMBER, reply(HELLO_PID, 1), false);
        states.observe(MEMBER, reply(LEGACY_PID, 1), true);
        states.topologyVersion(MEMBER, true); // shifted, and two processIds
        String duplicateKey = "{ok: 0.0, code: 11000, codeName: 'DuplicateKey', errmsg: 'E11000'}";
        for (String json : new String[] {
                duplicateKey,
                "{ok: 0.0, code: 10107, topologyVersion: 'x'}",
                "{ok: 0.0, code: 10107, topologyVersion: {counter: {$numberLong: '1'}}}",
                "{ok: 0.0, code: 10107, topologyVersion: {processId: '" + HELLO_PID + "', counter: {$numberLong: '1'}}}",
                "{ok: 0.0, code: 10107, topologyVersion: {processId: {$oid: '" + HELLO_PID + "'}}}"}) {
            BsonDocument reply = BsonDocument.parse(json);
            assertFalse(states.shiftReply(MEMBER, reply), json);
            assertEquals(BsonDocument.parse(json), reply, json);
            BsonDocument request = BsonDocument.parse(json.replaceFirst("ok: 0.0, code: [0-9]+", "hello: 1"));
            BsonDocument asSent = request.clone();
            assertFalse(states.unshiftRequest(MEMBER, request), request::toJson);
            assertEquals(asSent, request);
        }
        states.restarted(MEMBER);
        BsonDocument error = BsonDocument.parse(duplicateKey);
        assertFalse(states.shiftReply(MEMBER, error), "after a restart too");
        assertEquals(BsonDocument.parse(duplicateKey), error);
    }

    @Test
    void quirksAreNotedPerMember() {
        MemberQuirks primaryReadsOnly = new MemberQuirks(true, false, false, false, false, false, false, false, false);
        MemberQuirks more = new MemberQuirks(true, true, false, false, false, false, false, false, false);
        assertEquals(MemberQuirks.NONE, states.quirks(MEMBER));
        assertFalse(states.noteQuirks(MEMBER, MemberQuirks.NONE), "a mongod: nothing to note");
        assertEquals(MemberQuirks.NONE, states.quirks(MEMBER));
        assertTrue(states.noteQuirks(MEMBER, primaryReadsOnly));
        assertEquals(primaryReadsOnly, states.quirks(MEMBER));
        assertEquals(MemberQuirks.NONE, states.quirks(MemberAddress.parse("b:27017")), "another member's are its own");
        assertFalse(states.noteQuirks(MEMBER, primaryReadsOnly), "nothing new");
        assertTrue(states.noteQuirks(MEMBER, more));
        assertEquals(more, states.quirks(MEMBER));
        assertNotEquals(MemberQuirks.NONE, states.quirks(MEMBER));
    }
}
