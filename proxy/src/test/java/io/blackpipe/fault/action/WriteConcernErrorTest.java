package io.blackpipe.fault.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.ErrorReplies;
import io.blackpipe.fault.FakeInterception;
import io.blackpipe.fault.FakeInterception.Facts;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class WriteConcernErrorTest {
    private static FakeInterception.FakeReply run(FakeInterception command, WriteConcernError action, String upstreamReply) {
        action.apply(command);
        assertEquals(List.of("forward(fate)"), command.calls, "the write runs on the server");
        FakeInterception.FakeReply reply = new FakeInterception.FakeReply(BsonDocument.parse(upstreamReply));
        command.fate.decide(reply);
        assertEquals(List.of("replace"), reply.calls);
        return reply;
    }

    /** As on mongod: a rule on every command, blocked first, blocks a find; a read gets no writeConcernError. */
    @Test
    void aCommandThatTakesNoWriteConcernIsForwardedUntouched() {
        FakeInterception find = new FakeInterception(Facts.command("find").build(), FakeInterception.primary(17));
        new WriteConcernError(BsonDocument.parse("{code: 64}"), null, ErrorReplies.TopologyVersionMode.NEWER).apply(find);
        assertEquals(List.of("forward"), find.calls);
    }

    @Test
    void addsTheWriteConcernErrorWithDefaultsToTheRealReply() {
        FakeInterception command = FakeInterception.retryableInsert();
        FakeInterception.FakeReply reply = run(command, new WriteConcernError(BsonDocument.parse("{code: 64}"), null, ErrorReplies.TopologyVersionMode.NEWER),
                "{n: 1, ok: 1.0}");
        BsonDocument body = reply.replacement;
        assertEquals(1, body.getInt32("n").getValue(), "the server's own reply is kept");
        assertEquals(1.0, body.getNumber("ok").doubleValue(), "a writeConcernError comes with ok: 1");
        BsonDocument error = body.getDocument("writeConcernError");
        assertEquals(64, error.getInt32("code").getValue());
        assertEquals("WriteConcernFailed", error.getString("codeName").getValue());
        assertEquals("waiting for replication timed out", error.getString("errmsg").getValue());
        assertFalse(body.containsKey("errorLabels"), "a mongod does not label WriteConcernFailed retryable");
        assertFalse(reply.body().containsKey("writeConcernError"), "the upstream's document is not modified in place");
    }

    @Test
    void aRetryableCodeGetsTheServersLabelWithoutNoWritesPerformed() {
        FakeInterception command = FakeInterception.retryableInsert();
        FakeInterception.FakeReply reply = run(command, new WriteConcernError(BsonDocument.parse("{code: 91}"), null, ErrorReplies.TopologyVersionMode.NEWER),
                "{n: 1, ok: 1.0}");
        assertEquals("ShutdownInProgress", reply.replacement.getDocument("writeConcernError").getString("codeName").getValue());
        assertEquals(BsonArray.parse("['RetryableWriteError']"), reply.replacement.getArray("errorLabels"),
                "the write happened: RetryableWriteError but no NoWritesPerformed");
    }

    /**
     * As mongod's failCommand gives a not-primary writeConcernError its topologyVersion (and blackpipe a newer one, as to
     * an error reply, by default): without one, a streaming driver waited out its monitor's held hello, about 10 s,
     * before it retried.
     */
    @Test
    void aStateChangeCodeCarriesATopologyVersionAsAnErrorReplyDoes() {
        FakeInterception newer = FakeInterception.retryableInsert();
        FakeInterception.FakeReply reply = run(newer, new WriteConcernError(BsonDocument.parse("{code: 10107}"), null,
                ErrorReplies.TopologyVersionMode.NEWER), "{n: 1, ok: 1.0}");
        assertTrue(reply.replacement.containsKey("topologyVersion"), reply.replacement::toJson);
        assertEquals(List.of(true), newer.topologyVersionRequests);
        assertEquals(List.of(ErrorReplies.ANNOUNCE_STATE_CHANGE_AFTER_MILLIS), newer.announcementDelays,
                "told to the held hellos a moment after the reply, not before the driver has read it");
        assertEquals("not primary", reply.replacement.getDocument("writeConcernError").getString("errmsg").getValue(),
                "the words of the state change that cut the wait, not of a replication timeout");

        FakeInterception current = FakeInterception.retryableInsert();
        run(current, new WriteConcernError(BsonDocument.parse("{code: 189}"), null, ErrorReplies.TopologyVersionMode.CURRENT),
                "{n: 1, ok: 1.0}");
        assertEquals(List.of(false), current.topologyVersionRequests);

        FakeInterception omitted = FakeInterception.retryableInsert();
        assertFalse(run(omitted, new WriteConcernError(BsonDocument.parse("{code: 10107}"), null, ErrorReplies.TopologyVersionMode.OMIT),
                "{n: 1, ok: 1.0}").replacement.containsKey("topologyVersion"));
        FakeInterception timedOut = FakeInterception.retryableInsert();
        assertFalse(run(timedOut, new WriteConcernError(BsonDocument.parse("{code: 64}"), null, ErrorReplies.TopologyVersionMode.NEWER),
                "{n: 1, ok: 1.0}").replacement.containsKey("topologyVersion"), "no state change: none");
        assertEquals(List.of(), timedOut.topologyVersionRequests);
    }

    @Test
    void keepsTheRulesOwnFieldsAndErrInfo() {
        FakeInterception command = FakeInterception.retryableInsert();
        FakeInterception.FakeReply reply = run(command, new WriteConcernError(BsonDocument.parse(
                "{code: 100, codeName: 'X', errmsg: 'custom', errInfo: {wtimeout: true}}"), null, ErrorReplies.TopologyVersionMode.NEWER), "{n: 1, ok: 1.0}");
        BsonDocument error = reply.replacement.getDocument("writeConcernError");
        assertEquals(BsonDocument.parse("{code: 100, codeName: 'X', errmsg: 'custom', errInfo: {wtimeout: true}}"), error);
        assertFalse(reply.replacement.containsKey("errorLabels"), "100 is not a retryable code");
    }

    @Test
    void aMissingCodeMeans64() {
        FakeInterception command = FakeInterception.retryableInsert();
        FakeInterception.FakeReply reply = run(command, new WriteConcernError(new BsonDocument(), null, ErrorReplies.TopologyVersionMode.NEWER), "{n: 1, ok: 1.0}");
        assertEquals(64, reply.replacement.getDocument("writeConcernError").getInt32("code").getValue());
    }

    @Test
    void explicitLabelsReplaceTheComputedOnesAndAnEmptyListSuppressesThem() {
        FakeInterception command = FakeInterception.retryableInsert();
        FakeInterception.FakeReply reply = run(command, new WriteConcernError(BsonDocument.parse("{code: 64}"),
                BsonArray.parse("['Custom']"), ErrorReplies.TopologyVersionMode.NEWER), "{n: 1, ok: 1.0}");
        assertEquals(BsonArray.parse("['Custom']"), reply.replacement.getArray("errorLabels"));

        FakeInterception again = FakeInterception.retryableInsert();
        FakeInterception.FakeReply none = run(again, new WriteConcernError(BsonDocument.parse("{code: 91}"), new BsonArray(), ErrorReplies.TopologyVersionMode.NEWER),
                "{n: 1, ok: 1.0}");
        assertFalse(none.replacement.containsKey("errorLabels"));
    }

    @Test
    void noRetryableWriteErrorWithoutATxnNumber() {
        FakeInterception command = new FakeInterception(Facts.insert().build(), FakeInterception.primary(17));
        FakeInterception.FakeReply reply = run(command, new WriteConcernError(BsonDocument.parse("{code: 91}"), null, ErrorReplies.TopologyVersionMode.NEWER),
                "{n: 1, ok: 1.0}");
        assertFalse(reply.replacement.containsKey("errorLabels"));
        assertEquals("writeConcernError", new WriteConcernError(new BsonDocument(), null, ErrorReplies.TopologyVersionMode.NEWER).name());
    }
}
