package io.blackpipe.upstream;

import java.io.IOException;

/** Chooses the best local upstream this machine can run: a real mongod if there is one, else jongodb. */
public final class LocalUpstreams {
    private LocalUpstreams() {
    }

    public static boolean mongodOnPath() {
        return PathLookup.find("mongod").isPresent();
    }

    /** Starts a 3-member mongod replica set when mongod is on PATH, otherwise a jongodb single-node set. */
    public static LocalUpstream start() throws IOException {
        return mongodOnPath() ? MongodReplicaSet.start() : JongodbUpstream.start();
    }
}
