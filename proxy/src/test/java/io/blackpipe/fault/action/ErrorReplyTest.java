package io.blackpipe.fault.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.ErrorReplies.TopologyVersionMode;
import io.blackpipe.fault.FakeInterception;
import io.blackpipe.fault.FakeInterception.Facts;
import io.blackpipe.topology.MemberState;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.junit.jupiter.api.Test;

class ErrorReplyTest {
    private static BsonDocument answer(FakeInterception command, ErrorReply action) {
        action.apply(command);
        assertEquals(List.of("answer"), command.calls, "answered by the proxy; the server never sees the command");
        return command.answered;
    }

    @Test
    void buildsCodeCodeNameErrmsgAndOkZero() {
        BsonDocument reply = answer(FakeInterception.retryableInsert(), new ErrorReply(10107, null, null, null, TopologyVersionMode.NEWER));
        assertEquals(0.0, reply.getNumber("ok").doubleValue());
        assertEquals(10107, reply.getInt32("code").getValue());
        assertEquals("NotWritablePrimary", reply.getString("codeName").getValue());
        assertEquals("not primary", reply.getString("errmsg").getValue());
    }

    @Test
    void notPrimaryErrorsAreWordedAsMongodWordsThemToAClientThatNeverSaidHelloOk() {
        FakeInterception legacy = FakeInterception.retryableInsert();
        legacy.clientSaidHelloOk = false;
        assertEquals("not master", answer(legacy, new ErrorReply(10107, null, null, null, TopologyVersionMode.NEWER))
                .getString("errmsg").getValue());
        FakeInterception legacyRead = FakeInterception.retryableInsert();
        legacyRead.clientSaidHelloOk = false;
        assertEquals("not master and slaveOk=false", answer(legacyRead, new ErrorReply(13435, null, null, null,
                TopologyVersionMode.NEWER)).getString("errmsg").getValue());
        FakeInterception custom = FakeInterception.retryableInsert();
        custom.clientSaidHelloOk = false;
        assertEquals("mine", answer(custom, new ErrorReply(10107, "mine", null, null, TopologyVersionMode.NEWER))
                .getString("errmsg").getValue(), "a rule's own message is sent as written");
    }

    @Test
    void computesTheServersLabelsForARetryableWrite() {
        BsonDocument reply = answer(FakeInterception.retryableInsert(), new ErrorReply(189, null, null, null, TopologyVersionMode.NEWER));
        assertEquals(BsonArray.parse("['RetryableWriteError', 'NoWritesPerformed']"), reply.getArray("errorLabels"));
    }

    @Test
    void explicitLabelsAreSentExactlyAndAnEmptyListSuppressesThem() {
        BsonDocument custom = answer(FakeInterception.retryableInsert(),
                new ErrorReply(10107, null, BsonArray.parse("['Mine']"), null, TopologyVersionMode.NEWER));
        assertEquals(BsonArray.parse("['Mine']"), custom.getArray("errorLabels"));
        BsonDocument none = answer(FakeInterception.retryableInsert(), new ErrorReply(10107, null, new BsonArray(), null, TopologyVersionMode.NEWER));
        assertFalse(none.containsKey("errorLabels"));
    }

    @Test
    void aCustomMessageIsKept() {
        BsonDocument reply = answer(FakeInterception.retryableInsert(), new ErrorReply(2, "bad thing", null, null, TopologyVersionMode.NEWER));
        assertEquals("bad thing", reply.getString("errmsg").getValue());
        assertEquals("BadValue", reply.getString("codeName").getValue());
    }

    @Test
    void stateChangeErrorsCarryANewerTopologyVersionByDefault() {
        for (int code : new int[] {10107, 13435, 10058, 11600, 11602, 13436, 189, 91}) {
            FakeInterception command = FakeInterception.retryableInsert();
            BsonDocument reply = answer(command, new ErrorReply(code, null, null, null, TopologyVersionMode.NEWER));
            assertEquals(List.of(true), command.topologyVersionRequests, "code " + code);
            assertEquals(new BsonDocument("processId", new BsonObjectId(FakeInterception.PROCESS_ID)).append("counter", new BsonInt64(8)),
                    reply.getDocument("topologyVersion"), "code " + code);
        }
    }

    @Test
    void currentSendsTheMembersOwnTopologyVersion() {
        FakeInterception command = FakeInterception.retryableInsert();
        BsonDocument reply = answer(command, new ErrorReply(10107, null, null, null, TopologyVersionMode.CURRENT));
        assertEquals(List.of(false), command.topologyVersionRequests);
        assertEquals(7, reply.getDocument("topologyVersion").getInt64("counter").getValue());
    }

    @Test
    void omitSendsNoneAndDoesNotShiftTheMember() {
        FakeInterception command = FakeInterception.retryableInsert();
        BsonDocument reply = answer(command, new ErrorReply(10107, null, null, null, TopologyVersionMode.OMIT));
        assertTrue(command.topologyVersionRequests.isEmpty(), "asking for a newer one would shift the member");
        assertFalse(reply.containsKey("topologyVersion"));
    }

    @Test
    void otherErrorsCarryNoTopologyVersionWhateverTheMode() {
        for (int code : new int[] {13, 2, 11000, 262, 64, 9001}) {
            for (TopologyVersionMode mode : TopologyVersionMode.values()) {
                FakeInterception command = FakeInterception.retryableInsert();
                BsonDocument reply = answer(command, new ErrorReply(code, null, null, null, mode));
                assertTrue(command.topologyVersionRequests.isEmpty(), code + " " + mode);
                assertFalse(reply.containsKey("topologyVersion"), code + " " + mode);
            }
        }
    }

    @Test
    void aMemberWithoutTopologyVersionGetsAnErrorWithoutOne() {
        FakeInterception command = new FakeInterception(Facts.insert().txnNumber(3).build(),
                new MemberState(MemberState.Role.PRIMARY, 17, null, -1));
        BsonDocument reply = answer(command, new ErrorReply(10107, null, null, null, TopologyVersionMode.NEWER));
        assertFalse(reply.containsKey("topologyVersion"));
    }

    @Test
    void unauthorizedNamesTheDatabaseAndCommandLikeTheServer() {
        FakeInterception command = new FakeInterception(Facts.command("find").database("shop").build(), FakeInterception.primary(17));
        BsonDocument reply = answer(command, new ErrorReply(13, null, null, null, TopologyVersionMode.NEWER));
        assertEquals("Unauthorized", reply.getString("codeName").getValue());
        assertTrue(reply.getString("errmsg").getValue().contains("not authorized on shop"));
        assertFalse(reply.containsKey("errorLabels"));
        assertEquals(13, new ErrorReply(13, null, null, null, TopologyVersionMode.NEWER).code());
        assertEquals("errorReply", new ErrorReply(13, null, null, null, TopologyVersionMode.NEWER).name());
    }
}
