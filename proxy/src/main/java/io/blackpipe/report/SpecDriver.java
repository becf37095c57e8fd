package io.blackpipe.report;

/**
 * Runs one spec case's operation through blackpipe: the bundled Java driver, or an external
 * program (any language's driver) given the connection string and the operation.
 */
public interface SpecDriver {
    /** The collection every operation works on, in the connection string's database. */
    String COLLECTION = "items";

    /** Shown in the report, e.g. "Java driver 5.14.0". */
    String name();

    /**
     * Runs {@code operation} (insert, find, getMore, updateMany, deleteMany or insertW0) against
     * {@code uri} (blackpipe's connection string with the case's database and retryWrites and
     * retryReads on); returns what the application saw, e.g. "ok" or an exception.
     */
    String run(String uri, String operation) throws InterruptedException;

    /** The Java driver bundled with blackpipe. */
    static SpecDriver bundledJava() {
        return new JavaSpecDriver();
    }

    /** An external program: {@code command uri operation}, judged by the attempts the proxy sees. */
    static SpecDriver external(String command) {
        return new ExternalSpecDriver(command);
    }
}
