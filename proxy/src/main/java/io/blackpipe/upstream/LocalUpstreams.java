package io.blackpipe.upstream;

import java.io.IOException;
import java.util.Locale;

/** Chooses the local upstream: a real mongod if there is one, else jongodb, unless the user names one. */
public final class LocalUpstreams {
    /** Which engine `local` and `report` start. */
    public enum Engine {
        /** mongod when one is on PATH, else jongodb. */
        AUTO,
        /** a 3-member replica set of the mongod on PATH. */
        MONGOD,
        /** the jongodb engine from the npm registry, a single-node replica set. */
        JONGODB;

        /** "auto", "mongod" or "jongodb", in any case; anything else is an IllegalArgumentException naming the three. */
        public static Engine named(String name) {
            try {
                return valueOf(name.strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--engine '" + name + "' is none of auto, mongod, jongodb");
            }
        }
    }

    private LocalUpstreams() {
    }

    public static boolean mongodOnPath() {
        return PathLookup.find("mongod").isPresent();
    }

    /** Starts a 3-member mongod replica set when mongod is on PATH, otherwise a jongodb single-node set. */
    public static LocalUpstream start() throws IOException {
        return start(Engine.AUTO, JongodbInstaller.TESTS_OTHER_WAYS);
    }

    /**
     * Starts the engine named. A mongod chosen because it was on PATH that cannot start (one built for a CPU with AVX, on
     * one without) says how to run jongodb instead: taking it off PATH was the only way. Jongodb that cannot be installed
     * or run says what to do instead: {@code otherWays}, which differ between the CLI's commands and the tests.
     */
    public static LocalUpstream start(Engine engine, String otherWays) throws IOException {
        return switch (engine) {
            case JONGODB -> JongodbUpstream.start(otherWays);
            case MONGOD -> {
                if (!mongodOnPath()) {
                    throw new IOException("--engine mongod: there is no mongod on PATH");
                }
                yield MongodReplicaSet.start();
            }
            case AUTO -> {
                if (!mongodOnPath()) {
                    yield JongodbUpstream.start(otherWays);
                }
                try {
                    yield MongodReplicaSet.start();
                } catch (IOException e) {
                    throw new IOException(e.getMessage() + "\n(the mongod on PATH was chosen: --engine jongodb, or BLACKPIPE_ENGINE=jongodb,"
                            + " runs the jongodb engine instead)", e);
                }
            }
        };
    }
}
