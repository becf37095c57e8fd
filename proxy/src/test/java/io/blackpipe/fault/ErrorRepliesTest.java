package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.FakeInterception.Facts;
import io.blackpipe.topology.MemberState;
import io.blackpipe.wire.CommandFacts;
import java.util.HashSet;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The error labels a real server computes, and that blackpipe therefore synthesizes. */
class ErrorRepliesTest {
    private static final BsonArray NONE = new BsonArray();
    private static final BsonArray RETRYABLE = BsonArray.parse("['RetryableWriteError']");
    private static final BsonArray RETRYABLE_NO_WRITES = BsonArray.parse("['RetryableWriteError', 'NoWritesPerformed']");
    private static final BsonArray TRANSIENT = BsonArray.parse("['TransientTransactionError']");

    private static MemberState wire(int maxWireVersion) {
        return FakeInterception.primary(maxWireVersion);
    }

    private static BsonArray labels(int code, CommandFacts facts, int wire) {
        return ErrorReplies.labels(code, null, facts, false, wire(wire), true);
    }

    @Test
    void retryableWriteErrorNeedsATxnNumber() {
        assertEquals(NONE, labels(10107, Facts.insert().build(), 17), "no txnNumber: retryWrites off, nothing to retry");
        assertEquals(NONE, labels(10107, Facts.insert().noSession().build(), 17));
        assertEquals(NONE, labels(10107, Facts.command("find").build(), 17), "reads are never labelled");
        assertEquals(RETRYABLE_NO_WRITES, labels(10107, Facts.insert().txnNumber(5).build(), 17));
        assertEquals(RETRYABLE_NO_WRITES, labels(10107, Facts.insert().txnNumber(0).build(), 17), "txnNumber 0 is a txnNumber");
    }

    @Test
    void retryableWriteErrorNeedsARetryableCode() {
        for (int code : ErrorCodes.RETRYABLE_WRITE) {
            assertEquals(RETRYABLE_NO_WRITES, labels(code, Facts.insert().txnNumber(1).build(), 17), "code " + code);
        }
        for (int code : new int[] {2, 13, 11000, 112, 251, 50, 1, 64}) {
            assertEquals(NONE, labels(code, Facts.insert().txnNumber(1).build(), 17), "code " + code);
        }
    }

    @Test
    void theServerLabelsItsWholeRetriableCategoryNotOnlyTheSpecsList() {
        // error_codes.yml: ReadConcernMajorityNotAvailableYet is a RetriableError, so a mongod labels it
        assertEquals(RETRYABLE_NO_WRITES, labels(134, Facts.insert().txnNumber(1).build(), 17));
        assertEquals(RETRYABLE_NO_WRITES, labels(358, Facts.insert().txnNumber(1).build(), 17), "InternalTransactionNotSupported");
        assertEquals(NONE, labels(358, Facts.insert().inTransaction().build(), 17), "... which is never transient");
        for (int code : ErrorCodes.RETRYABLE_WRITE) {
            assertTrue(ErrorCodes.SERVER_RETRIABLE.contains(code), "the spec's code " + code + " is in the server's category");
        }
    }

    @Test
    void everyCodeTheLabelsKnowHasTheServersCodeName() {
        Set<Integer> labelled = new HashSet<>(ErrorCodes.SERVER_RETRIABLE);
        labelled.addAll(ErrorCodes.TRANSIENT_IN_ANY_TRANSACTION_COMMAND);
        for (int code : labelled) {
            assertFalse(ErrorCodes.name(code).startsWith("Location"), "code " + code + " has its name");
        }
        assertEquals("LockTimeout", ErrorCodes.name(24));
        assertEquals("SnapshotUnavailable", ErrorCodes.name(246));
    }

    @Test
    void writeConcernFailedIsNotLabelledLikeOnAMongod() {
        // mongod's jstests/replsets/retryable_write_error_labels.js: WriteConcernFailed gets no label,
        // as an error or as a writeConcernError, although the first retryable-writes spec listed it
        CommandFacts write = Facts.insert().txnNumber(1).build();
        assertEquals(NONE, labels(64, write, 17));
        assertEquals(NONE, ErrorReplies.labels(null, 64, write, false, wire(17), false));
    }

    @Test
    void retryableWriteErrorOnlyFromWireVersion9() {
        CommandFacts write = Facts.insert().txnNumber(1).build();
        assertEquals(NONE, labels(91, write, 8), "before 4.4 drivers classify by code; the server sent no label");
        assertEquals(NONE, labels(91, write, 0), "an unknown member: no labels");
        assertEquals(RETRYABLE, labels(91, write, 9));
        assertEquals(RETRYABLE, labels(91, write, 13));
    }

    @Test
    void noWritesPerformedFromWireVersion17WhenNothingWasWritten() {
        CommandFacts write = Facts.insert().txnNumber(1).build();
        assertEquals(RETRYABLE, labels(189, write, 16));
        assertEquals(RETRYABLE_NO_WRITES, labels(189, write, 17));
        assertEquals(RETRYABLE_NO_WRITES, labels(189, write, 25));
        assertEquals(RETRYABLE, ErrorReplies.labels(null, 91, write, false, wire(25), false), "after a write (writeConcernError)");
    }

    @Test
    void commitAndAbortAreRetryableWritesEvenInsideTheTransaction() {
        for (String end : new String[] {"commitTransaction", "abortTransaction"}) {
            CommandFacts facts = Facts.command(end).database("admin").collection("").inTransaction().build();
            assertEquals(RETRYABLE_NO_WRITES, labels(91, facts, 17), end);
            assertEquals(NONE, labels(13, facts, 17), end);
            CommandFacts noTxnNumber = Facts.command(end).database("admin").collection("").build();
            assertEquals(RETRYABLE_NO_WRITES, labels(91, noTxnNumber, 17), end + " counts as a retryable write by name");
        }
    }

    @Test
    void commitAndAbortAreTransientOnTheCodesThatLeaveNothingCommitted() {
        for (String end : new String[] {"commitTransaction", "abortTransaction"}) {
            CommandFacts facts = Facts.command(end).database("admin").collection("").inTransaction().build();
            assertEquals(TRANSIENT, labels(251, facts, 17), end + ": NoSuchTransaction");
            assertEquals(TRANSIENT, labels(112, facts, 17), end + ": WriteConflict");
            assertEquals(TRANSIENT, labels(246, facts, 17), end + ": SnapshotUnavailable");
            assertEquals(NONE, ErrorReplies.labels(251, 64, facts, false, wire(17), true),
                    end + ": NoSuchTransaction with a writeConcernError may have been committed elsewhere");
            assertEquals(RETRYABLE, ErrorReplies.labels(null, 91, facts, false, wire(17), false), end + ": a retriable writeConcernError");
        }
    }

    @Test
    void insideATransactionTheLabelIsTransientTransactionError() {
        CommandFacts statement = Facts.insert().inTransaction().build();
        assertEquals(TRANSIENT, labels(10107, statement, 17));
        assertEquals(TRANSIENT, labels(91, statement, 17));
        assertEquals(TRANSIENT, labels(112, statement, 17), "WriteConflict");
        assertEquals(TRANSIENT, labels(251, statement, 17), "NoSuchTransaction");
        for (int code : new int[] {24, 134, 239, 246, 250, 267, 272, 150, 13388, 249, 343}) {
            assertEquals(TRANSIENT, labels(code, statement, 17), "code " + code);
        }
        assertEquals(NONE, labels(13, statement, 17));
        assertEquals(NONE, labels(11000, statement, 17));
    }

    @Test
    void theReplyCarriesTheComputedLabelsUnlessTheRuleGivesItsOwn() {
        CommandFacts write = Facts.insert().txnNumber(1).build();
        BsonDocument computed = ErrorReplies.error(10107, null, null, null, write, wire(17));
        assertEquals(RETRYABLE_NO_WRITES, computed.getArray("errorLabels"));
        BsonDocument replaced = ErrorReplies.error(10107, null, BsonArray.parse("['Foo']"), null, write, wire(17));
        assertEquals(BsonArray.parse("['Foo']"), replaced.getArray("errorLabels"), "explicit labels replace the computed ones");
        BsonDocument suppressed = ErrorReplies.error(10107, null, new BsonArray(), null, write, wire(17));
        assertFalse(suppressed.containsKey("errorLabels"), "[] suppresses them");
        BsonDocument nonRetryable = ErrorReplies.error(13, null, null, null, write, wire(17));
        assertFalse(nonRetryable.containsKey("errorLabels"), "no empty errorLabels array is sent");
    }

    @Test
    void theReplyHasTheServersShape() {
        BsonDocument tv = BsonDocument.parse("{processId: {$oid: '65f0c0ffee0000000000abcd'}, counter: {$numberLong: '3'}}");
        BsonDocument reply = ErrorReplies.error(11600, null, null, tv, Facts.insert().txnNumber(1).build(), wire(17));
        assertEquals(BsonDocument.parse("{ok: 0.0, errmsg: 'interrupted at shutdown', code: 11600,"
                + " codeName: 'InterruptedAtShutdown', errorLabels: ['RetryableWriteError', 'NoWritesPerformed'],"
                + " topologyVersion: {processId: {$oid: '65f0c0ffee0000000000abcd'}, counter: {$numberLong: '3'}}}"), reply);
        assertEquals("Location4242", ErrorCodes.name(4242), "an unnamed code still gets a codeName");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "10107 | not primary",
            "13435 | not primary and secondaryOk=false",
            "13436 | not primary or secondary; cannot currently read from this replSet member",
            "11602 | operation was interrupted because of a replica set state change",
            "11600 | interrupted at shutdown",
            "91    | The server is in quiesce mode and will shut down",
            "189   | primary stepped down",
            "13    | not authorized on app to execute command { insert }",
            "2     | Failing command insert via blackpipe's failCommand",
            "11000 | Failing command insert via blackpipe's failCommand",
    })
    void withoutAnErrmsgTheReplySaysWhatTheServerWouldSay(int code, String errmsg) {
        CommandFacts insert = Facts.insert().txnNumber(1).build();
        assertEquals(errmsg, ErrorReplies.error(code, null, null, null, insert, wire(17)).getString("errmsg").getValue());
        assertEquals("given", ErrorReplies.error(code, "given", null, null, insert, wire(17)).getString("errmsg").getValue(),
                "an errmsg the rule gives is sent as it is");
    }

    /**
     * service_entry_point_common.cpp's words: "not primary" to a client that said helloOk, the pre-4.4.2 "not master"
     * to one that did not (old drivers retry on those words); for 13435 as for 10107.
     */
    @Test
    void notPrimaryWordingFollowsTheClientsHandshakeForBothCodes() {
        assertEquals("not primary", ErrorReplies.notPrimaryWording(10107, true));
        assertEquals("not master", ErrorReplies.notPrimaryWording(10107, false));
        assertEquals("not primary and secondaryOk=false", ErrorReplies.notPrimaryWording(13435, true));
        assertEquals("not master and slaveOk=false", ErrorReplies.notPrimaryWording(13435, false));
        assertEquals(null, ErrorReplies.notPrimaryWording(13436, false), "other codes: the default words, whatever the handshake");
    }

    /**
     * A member that stepped down during a rule's block fails the write itself (NotWritablePrimary, with its own
     * RetryableWriteError and NoWritesPerformed); the writeConcernError added to that reply keeps those labels, which the
     * driver reads first, and adds a computed label only once.
     */
    @Test
    void aWriteConcernErrorOnAFailedReplyKeepsTheRepliesLabelsWithoutDuplicates() {
        BsonDocument failed = BsonDocument.parse("{ok: 0.0, errmsg: 'not primary', code: 10107, codeName: 'NotWritablePrimary',"
                + " errorLabels: ['RetryableWriteError', 'NoWritesPerformed']}");
        BsonDocument reply = ErrorReplies.withWriteConcernError(failed, BsonDocument.parse("{code: 91}"), null,
                Facts.insert().txnNumber(1).build(), wire(17));
        assertEquals(RETRYABLE_NO_WRITES, reply.getArray("errorLabels"),
                "the reply's own labels first, the writeConcernError's RetryableWriteError not added twice");
        assertEquals(10107, reply.getInt32("code").getValue(), "the failed reply keeps its code");
        assertEquals("ShutdownInProgress", reply.getDocument("writeConcernError").getString("codeName").getValue());
        assertEquals(RETRYABLE_NO_WRITES, failed.getArray("errorLabels"), "the upstream's document is not modified in place");

        BsonDocument timedOut = BsonDocument.parse("{ok: 0.0, errmsg: 'operation exceeded time limit', code: 50,"
                + " codeName: 'MaxTimeMSExpired'}");
        assertEquals(RETRYABLE, ErrorReplies.withWriteConcernError(timedOut, BsonDocument.parse("{code: 91}"), null,
                Facts.insert().txnNumber(1).build(), wire(17)).getArray("errorLabels"),
                "a failed reply without labels gets the writeConcernError's");
    }

    @Test
    void badValueIsTheWireCommandsRejection() {
        assertEquals(BsonDocument.parse("{ok: 0.0, errmsg: 'data.errorCode: must be an integer', code: 2, codeName: 'BadValue'}"),
                ErrorReplies.badValue("data.errorCode: must be an integer"));
    }

    private static final BsonArray RESUMABLE = BsonArray.parse("['ResumableChangeStreamError']");
    private static final BsonArray NON_RESUMABLE = BsonArray.parse("['NonResumableChangeStreamError']");

    private static BsonArray changeStreamLabels(int code, String command, int wire) {
        return ErrorReplies.labels(code, null, Facts.command(command).build(), true, wire(wire), true);
    }

    /**
     * error_labels.cpp's isResumableChangeStreamError: on a change stream's aggregate or getMore a
     * 4.4+ server labels the RetriableError, NetworkError and NeedRetargettingError categories,
     * RetryChangeStream and FailedToSatisfyReadPreference; drivers resume on the label alone
     * (the change streams spec, and the Java driver's ChangeStreamBatchCursorHelper).
     */
    @Test
    void aChangeStreamsResumableErrorsAreLabelledResumable() {
        Set<Integer> resumable = new HashSet<>(ErrorCodes.SERVER_RETRIABLE);
        resumable.addAll(Set.of(6, 7, 89, 9001, 150, 13388, 234, 133));
        for (int code : resumable) {
            assertEquals(RESUMABLE, changeStreamLabels(code, "getMore", 21), "getMore, code " + code);
            assertEquals(RESUMABLE, changeStreamLabels(code, "aggregate", 9), "aggregate on 4.4, code " + code);
            assertEquals(NONE, changeStreamLabels(code, "getMore", 8), "a 4.2 server has no such label, code " + code);
            assertEquals(NONE, ErrorReplies.labels(code, null, Facts.command("getMore").build(), false, wire(21), true),
                    "a getMore of another cursor, code " + code);
            assertEquals(NONE, changeStreamLabels(code, "find", 21), "only aggregate and getMore, code " + code);
        }
        for (int code : new int[] {43, 50, 11601, 136, 237, 2, 13, 26, 112}) {
            assertEquals(NONE, changeStreamLabels(code, "getMore", 21), "not resumable by label: code " + code);
        }
        assertEquals(NONE, ErrorReplies.labels(null, 91, Facts.command("aggregate").build(), true, wire(21), false),
                "never with a writeConcernError");
        assertEquals(NONE, ErrorReplies.labels(91, 64, Facts.command("getMore").build(), true, wire(21), true),
                "nor on an error that also carries one (error_labels.cpp: _code && !_wcCode)");
        for (int code : resumable) {
            assertFalse(ErrorCodes.name(code).startsWith("Location"), "code " + code + " has its name");
        }
    }

    @Test
    void nonResumableChangeStreamErrorsAreLabelledSoOnAnyCommand() {
        for (int code : new int[] {280, 286}) {
            assertEquals(NON_RESUMABLE, changeStreamLabels(code, "getMore", 21), "code " + code);
            assertEquals(NON_RESUMABLE, labels(code, Facts.command("find").build(), 17), "mongod labels by code alone: " + code);
        }
        assertEquals("ChangeStreamFatalError", ErrorCodes.name(280));
        assertEquals("ChangeStreamHistoryLost", ErrorCodes.name(286));
    }

    @Test
    void aChangeStreamErrorReplyCarriesTheLabelUnlessTheRuleGivesItsOwn() {
        CommandFacts getMore = Facts.command("getMore").build();
        BsonDocument computed = ErrorReplies.error(6, null, null, null, getMore, true, wire(21));
        assertEquals(RESUMABLE, computed.getArray("errorLabels"));
        assertFalse(ErrorReplies.error(6, null, new BsonArray(), null, getMore, true, wire(21)).containsKey("errorLabels"),
                "errorLabels: [] suppresses it, as failCommand's errorLabels do");
        assertFalse(ErrorReplies.error(6, null, null, null, getMore, wire(21)).containsKey("errorLabels"),
                "the facts alone do not make a getMore a change stream's");
    }

    private static final BsonArray OVERLOADED = BsonArray.parse("['SystemOverloadedError']");
    private static final BsonString SYSTEM_OVERLOADED_ERROR = new BsonString("SystemOverloadedError");
    private static final BsonString RETRYABLE_ERROR = new BsonString("RetryableError");

    /**
     * error_labels.cpp's isSystemOverloadedError (8.2, SERVER-101699): an overload code is
     * labelled SystemOverloadedError on any command, read or write, with a session or without.
     */
    @Test
    void anOverloadCodeIsLabelledSystemOverloadedErrorOnAnyCommandFrom82() {
        for (int code : new int[] {365, 433, 462}) {
            assertEquals(OVERLOADED, labels(code, Facts.command("find").build(), 27), "find, code " + code);
            assertEquals(OVERLOADED, labels(code, Facts.insert().noSession().build(), 27), "a write without session, code " + code);
            assertEquals(OVERLOADED, labels(code, Facts.command("getMore").build(), 29), "getMore on 9.0, code " + code);
            assertEquals(NONE, labels(code, Facts.command("find").build(), 26), "an 8.1 server has no such label, code " + code);
            assertEquals(NONE, labels(code, Facts.command("find").build(), 25), "nor has 8.0, which has the category, code " + code);
            assertFalse(ErrorCodes.name(code).startsWith("Location"), "code " + code + " has its name");
        }
        assertEquals("TemporarilyUnavailable", ErrorCodes.name(365));
        assertEquals("AdmissionQueueOverflow", ErrorCodes.name(433));
    }

    @Test
    void otherCodesAreNotOverloadErrors() {
        for (int code : new int[] {2, 6, 24, 50, 91, 112, 134, 262, 402, 407, 10107, 11600}) {
            assertFalse(labels(code, Facts.command("find").build(), 29).contains(SYSTEM_OVERLOADED_ERROR), "code " + code);
            assertFalse(labels(code, Facts.insert().txnNumber(1).build(), 29).contains(SYSTEM_OVERLOADED_ERROR), "write, code " + code);
        }
    }

    @Test
    void systemOverloadedErrorComesAfterTheOtherLabelsItDoesNotReplace() {
        assertEquals(BsonArray.parse("['RetryableWriteError', 'NoWritesPerformed', 'SystemOverloadedError']"),
                labels(462, Facts.insert().txnNumber(1).build(), 27), "a retryable write: 462 is also a retriable code");
        assertEquals(BsonArray.parse("['TransientTransactionError', 'SystemOverloadedError']"),
                labels(462, Facts.insert().inTransaction().build(), 27), "a statement in a transaction");
        assertEquals(BsonArray.parse("['ResumableChangeStreamError', 'SystemOverloadedError']"),
                ErrorReplies.labels(462, null, Facts.command("getMore").build(), true, wire(27), true), "a change stream's getMore");
        assertEquals(OVERLOADED, labels(365, Facts.insert().txnNumber(1).build(), 27), "365 is not retriable: the label alone");
    }

    @Test
    void systemOverloadedErrorLabelsTheErrorNotAWriteConcernError() {
        CommandFacts write = Facts.insert().txnNumber(1).build();
        assertEquals(BsonArray.parse("['RetryableWriteError']"), ErrorReplies.labels(null, 462, write, false, wire(27), false),
                "mongod checks the reply's code only");
        assertEquals(NONE, ErrorReplies.labels(null, 365, write, false, wire(27), false));
    }

    /**
     * mongod's label builder never adds RetryableError to failCommand's errors (its
     * isOperationIdempotent() is false); a real rate-limiter rejection carries it because the
     * limiter adds it, which an injected code does not imitate unless the rule says so.
     */
    @Test
    void retryableErrorIsNeverComputed() {
        for (int code : new int[] {365, 433, 462, 91, 6}) {
            for (CommandFacts facts : new CommandFacts[] {Facts.command("find").build(), Facts.insert().build(),
                    Facts.insert().txnNumber(1).build(), Facts.command("getMore").build()}) {
                assertFalse(labels(code, facts, 29).contains(RETRYABLE_ERROR), "code " + code);
            }
        }
        BsonDocument injected = ErrorReplies.error(462, null, BsonArray.parse("['SystemOverloadedError', 'RetryableError']"), null,
                Facts.command("find").build(), wire(27));
        assertEquals(BsonArray.parse("['SystemOverloadedError', 'RetryableError']"), injected.getArray("errorLabels"),
                "a rule's errorLabels give a rejection's labels");
        assertFalse(ErrorReplies.error(462, null, new BsonArray(), null, Facts.command("find").build(), wire(27))
                .containsKey("errorLabels"), "errorLabels: [] suppresses SystemOverloadedError too");
    }
}
