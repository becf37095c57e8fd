package io.blackpipe.fault;

/** A scenario that cannot be loaded: the message reads "source:line: field: what is wrong". */
public final class ScenarioException extends RuntimeException {
    public ScenarioException(String source, int line, String field, String message) {
        super(source + ":" + line + ": " + field + ": " + message);
    }
}
