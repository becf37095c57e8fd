package io.blackpipe.report;

/**
 * What happened in one spec case: the attempts the proxy saw for the case's command and what the
 * driver (or the external program) reported.
 */
public record SpecResult(SpecCase specCase, long attempts, String raised) {
    public boolean matches() {
        return attempts == specCase.expectedAttempts();
    }

    public boolean retried() {
        return attempts > 1;
    }

    /** MATCH, MISMATCH, or MISMATCH (not attempted) when the command never reached the proxy. */
    public String verdict() {
        if (matches()) {
            return "MATCH";
        }
        return attempts == 0 ? "MISMATCH (not attempted)" : "MISMATCH";
    }
}
