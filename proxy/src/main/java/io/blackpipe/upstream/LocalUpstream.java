package io.blackpipe.upstream;

import java.util.List;

/**
 * A MongoDB deployment that blackpipe started on this machine (for the quick start, reports and
 * tests) and that goes away again on {@link #close()}.
 */
public interface LocalUpstream extends AutoCloseable {

    /** A mongodb:// connection string for the deployment; it names the set with replicaSet= when it is one. */
    String uri();

    /** One human line saying what runs where, e.g. "jongodb 0.1.6 single-node replica set at 127.0.0.1:40123". */
    String description();

    /**
     * Where this deployment differs from mongod in a way an app or a test meets, for the user to read
     * before pointing one at it: one line each; none for a mongod.
     */
    default List<String> caveats() {
        return List.of();
    }

    /** Stops the processes and deletes the temporary directories. Safe to call more than once. */
    @Override
    void close();
}
