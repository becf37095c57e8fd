package io.blackpipe.fault;

/** A rule or scenario that cannot be accepted; {@code field} names where (e.g. "data.errorCode"). */
public final class RuleException extends RuntimeException {
    private final String field;

    public RuleException(String field, String message) {
        super(field + ": " + message);
        this.field = field;
    }

    public String field() {
        return field;
    }
}
