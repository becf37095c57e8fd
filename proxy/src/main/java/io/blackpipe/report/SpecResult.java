package io.blackpipe.report;

/**
 * What happened in one spec case: the attempts the proxy saw for the case's command, what is wrong
 * with their transaction ID (see {@link TransactionId}), and what the driver (or the external
 * program) reported.
 *
 * @param transactionProblem why the attempts' lsid and txnNumber break the spec, or null when they do not
 */
public record SpecResult(SpecCase specCase, long attempts, String transactionProblem, String raised) {
    public boolean matches() {
        return attempts == specCase.expectedAttempts() && transactionProblem == null;
    }

    public boolean retried() {
        return attempts > 1;
    }

    /**
     * MATCH; MISMATCH (not attempted) when the command never reached the proxy; else MISMATCH, with
     * what is wrong with the transaction ID when something is: a case whose attempts are as many as
     * the spec's but not one transaction is an application re-sending, not a driver retrying.
     */
    public String verdict() {
        if (matches()) {
            return "MATCH";
        }
        if (attempts == 0) {
            return "MISMATCH (not attempted)";
        }
        return transactionProblem == null ? "MISMATCH" : "MISMATCH (" + transactionProblem + ")";
    }
}
