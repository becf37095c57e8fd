package io.blackpipe.upstream;

import java.nio.file.Path;

/** A JVM that starts a replica set with the mongod named (args: mongod, set name): StartingServersTest stops it meanwhile. */
final class StartInAChildJvm {
    private StartInAChildJvm() {
    }

    public static void main(String[] args) throws Exception {
        System.out.println("started: " + MongodReplicaSet.start(Path.of(args[0]), args[1]));
    }
}
