package io.blackpipe.cli;

import io.blackpipe.upstream.LocalUpstreams;
import picocli.CommandLine.Option;

/** Which local upstream `local` and `report` start. */
final class EngineOption {
    @Option(names = "--engine", paramLabel = "auto|mongod|jongodb", defaultValue = "${env:BLACKPIPE_ENGINE:-auto}",
            description = "The local upstream: mongod (a 3-member replica set of the mongod on PATH), jongodb (from the npm registry),"
                    + " or auto, mongod when one is on PATH, else jongodb (env BLACKPIPE_ENGINE; default auto).")
    String engine;

    /** @throws IllegalArgumentException naming the option, when it names no engine */
    LocalUpstreams.Engine engine() {
        return LocalUpstreams.Engine.named(engine);
    }
}
