package io.blackpipe.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.blackpipe.observe.HistoryEntry;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** What the specs require of the attempts' lsid and txnNumber, case by case, on history entries as the proxy records them. */
class TransactionIdTest {
    private static final UUID SESSION = UUID.fromString("00000000-0000-4000-8000-000000000001");
    private static final UUID OTHER = UUID.fromString("00000000-0000-4000-8000-000000000002");

    private static HistoryEntry attempt(UUID lsid, long txnNumber) {
        return new HistoryEntry(1, 2, "127.0.0.1:27017", "app", 1, "insert", "db", "items", lsid, txnNumber, 1, null, "ok", "ok", 0);
    }

    @Test
    void aRetryIsTheSameTransactionOnlyWithTheFirstAttemptsLsidAndTxnNumber() {
        TransactionId same = TransactionId.SAME_ON_EVERY_ATTEMPT;
        assertNull(same.problem(List.of(attempt(SESSION, 4), attempt(SESSION, 4)), 2));
        assertNull(same.problem(List.of(attempt(SESSION, 4)), 1), "one attempt, with a txnNumber");
        assertEquals("retry with txnNumber 5 after 4: not the same transaction",
                same.problem(List.of(attempt(SESSION, 4), attempt(SESSION, 5)), 2));
        assertEquals("retry in another session (lsid): not the same transaction",
                same.problem(List.of(attempt(SESSION, 4), attempt(OTHER, 4)), 2));
        assertEquals("retry without txnNumber: not the same transaction", same.problem(List.of(attempt(SESSION, 4), attempt(SESSION, -1)), 2));
        assertEquals("attempt 3 with txnNumber 9 after 4: not the same transaction",
                same.problem(List.of(attempt(SESSION, 4), attempt(SESSION, 4), attempt(SESSION, 9)), 3));
        assertEquals("first attempt without txnNumber: its retry is not the same transaction",
                same.problem(List.of(attempt(SESSION, -1), attempt(SESSION, -1)), 2));
        assertEquals("first attempt without txnNumber: not sent as a retryable write", same.problem(List.of(attempt(SESSION, -1)), 1));
        assertEquals("first attempt without lsid and txnNumber: not sent as a retryable write", same.problem(List.of(attempt(null, -1)), 1));
    }

    @Test
    void whereTheSpecForbidsATransactionIdAnyAttemptCarryingOneIsAProblem() {
        TransactionId none = TransactionId.NONE;
        assertNull(none.problem(List.of(attempt(SESSION, -1)), 1), "an lsid alone is no transaction ID");
        assertNull(none.problem(List.of(attempt(null, -1)), 1));
        assertEquals("first attempt carried txnNumber 3, which the spec forbids here", none.problem(List.of(attempt(SESSION, 3)), 1));
        assertEquals("retry carried txnNumber 3, which the spec forbids here",
                none.problem(List.of(attempt(SESSION, -1), attempt(SESSION, 3)), 2));
    }

    @Test
    void readsAreNotJudgedAndAMissingHistoryEntryIsNotTakenForACompliantOne() {
        assertNull(TransactionId.NOT_JUDGED.problem(List.of(attempt(SESSION, -1), attempt(OTHER, -1)), 2));
        assertNull(TransactionId.SAME_ON_EVERY_ATTEMPT.problem(List.of(), 0), "no attempt: the count's mismatch, not this");
        assertEquals("the history holds 1 of 2 attempts: their txnNumber is not known",
                TransactionId.SAME_ON_EVERY_ATTEMPT.problem(List.of(attempt(SESSION, 4)), 2));
        assertEquals("the history holds 0 of 1 attempts: their txnNumber is not known", TransactionId.NONE.problem(List.of(), 1));
    }

    @Test
    void theVerdictSaysWhyWhenTheCountMatchesButTheTransactionDoesNot() {
        SpecCase write = new SpecCase("retryable write", "insert", "insert", 10107, 1, true);
        assertEquals("MATCH", new SpecResult(write, 2, null, "ok").verdict());
        assertEquals("MISMATCH (retry without txnNumber: not the same transaction)",
                new SpecResult(write, 2, "retry without txnNumber: not the same transaction", "ok").verdict());
        assertEquals("MISMATCH", new SpecResult(write, 1, null, "ok").verdict());
        assertEquals("MISMATCH (not attempted)", new SpecResult(write, 0, null, "ok").verdict());
    }

    @Test
    void eachCaseSaysWhatItRequiresOfTheTransactionId() {
        assertEquals("retry once (2), same txnNumber", new SpecCase("retryable write", "insert", "insert", 10107, 1, true).expectation());
        assertEquals("1 retry only (2), same txnNumber", new SpecCase("one retry only", "insert", "insert", null, 2, true).expectation());
        assertEquals("never retry (1), with txnNumber", new SpecCase("non-retryable write", "insert", "insert", 2, 1, false).expectation());
        SpecCase w0 = new SpecCase("never retried", "insertW0", "insert", 10107, 1, false);
        assertEquals("never retry (1), no txnNumber", w0.expectation());
        assertEquals(TransactionId.NONE, w0.transactionId());
        assertEquals(TransactionId.NONE, new SpecCase("never retried", "updateMany", "update", null, 1, false).transactionId());
        assertEquals("retry once (2 attempts)", new SpecCase("retryable read", "find", "find", 10107, 1, true).expectation());
        SpecCase onStandalone = new SpecCase("retryable write", "insert", "insert", 10107, 1, true).withoutWriteRetries();
        assertEquals("never retry (1), no txnNumber", onStandalone.expectation(), "the spec: no transaction ID where writes are not retryable");
    }

    @Test
    void theLabelCasesSendExactlyTheirLabels() {
        List<SpecCase> byLabel = SpecCase.all().stream().filter(c -> c.group().equals(SpecCase.BY_LABEL)).toList();
        assertEquals(2, byLabel.size());
        assertEquals("insert: 10107 NotWritablePrimary x1, labels []", byLabel.get(0).name());
        assertEquals(1, byLabel.get(0).expectedAttempts(), "a listed code without the label: a 4.4+ driver does not retry");
        assertEquals("[]", byLabel.get(0).rule().getDocument("data").getArray("errorLabels").getValues().toString());
        assertEquals("insert: 2 BadValue x1, labels [RetryableWriteError]", byLabel.get(1).name());
        assertEquals(2, byLabel.get(1).expectedAttempts(), "an unlisted code with the label: retried");
        assertEquals("RetryableWriteError", byLabel.get(1).rule().getDocument("data").getArray("errorLabels").get(0).asString().getValue());
        assertEquals(50, SpecCase.all().size());
    }
}
