package io.blackpipe.report;

import io.blackpipe.observe.HistoryEntry;
import java.util.List;

/**
 * What the retryable writes spec requires of a case's transaction ID (the command's lsid and
 * txnNumber), judged on the attempts blackpipe's history recorded. An application that re-sends a
 * failed write itself makes as many attempts as a driver's retry, but not the same transaction:
 * the server cannot tell the retry from new work, and may apply the write twice.
 */
public enum TransactionId {
    /**
     * A read: the retryable reads spec requires no session of the retry (it names the same
     * implicit session only as a reason for its 3.6 minimum), so nothing is judged.
     */
    NOT_JUDGED(""),
    /**
     * "Drivers MUST add a transaction ID to the command", and a retry is the same command: every
     * attempt carries the first attempt's lsid and txnNumber. An acknowledged insertOne where
     * retryable writes are supported.
     */
    SAME_ON_EVERY_ATTEMPT("same txnNumber"),
    /**
     * "Drivers MUST NOT add a transaction ID": a w:0 write, a multi-document write (updateMany,
     * deleteMany), or any write on a deployment without retryable writes.
     */
    NONE("no txnNumber");

    private final String shown;

    TransactionId(String shown) {
        this.shown = shown;
    }

    /** How the expectation column says it: "same txnNumber", "no txnNumber", or nothing for a read. */
    String shown() {
        return shown;
    }

    /**
     * What is wrong with the attempts' transaction IDs, or null when nothing is.
     *
     * @param attempts the history entries of the case's command, first attempt first
     * @param counted  the attempts blackpipe counted: a missing entry is not taken for a compliant one
     */
    String problem(List<HistoryEntry> attempts, long counted) {
        if (this == NOT_JUDGED || counted == 0) {
            return null; // no attempt at all is the attempt count's mismatch
        }
        if (attempts.size() < counted) {
            return "the history holds " + attempts.size() + " of " + counted + " attempts: their txnNumber is not known";
        }
        if (this == NONE) {
            for (int i = 0; i < attempts.size(); i++) {
                if (attempts.get(i).txnNumber() >= 0) {
                    return ordinal(i) + " carried txnNumber " + attempts.get(i).txnNumber() + ", which the spec forbids here";
                }
            }
            return null;
        }
        HistoryEntry first = attempts.get(0);
        if (first.lsid() == null || first.txnNumber() < 0) {
            String without = "first attempt without " + (first.lsid() == null ? "lsid and txnNumber" : "txnNumber");
            return without + (attempts.size() > 1 ? ": its retry is not the same transaction" : ": not sent as a retryable write");
        }
        for (int i = 1; i < attempts.size(); i++) {
            HistoryEntry retry = attempts.get(i);
            if (retry.txnNumber() < 0) {
                return ordinal(i) + " without txnNumber: not the same transaction";
            }
            if (!first.lsid().equals(retry.lsid())) {
                return ordinal(i) + " in another session (lsid): not the same transaction";
            }
            if (retry.txnNumber() != first.txnNumber()) {
                return ordinal(i) + " with txnNumber " + retry.txnNumber() + " after " + first.txnNumber()
                        + ": not the same transaction";
            }
        }
        return null;
    }

    private static String ordinal(int index) {
        return switch (index) {
            case 0 -> "first attempt";
            case 1 -> "retry";
            default -> "attempt " + (index + 1);
        };
    }
}
