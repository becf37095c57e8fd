package io.blackpipe.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The major version read from a mongod's or mongos' {@code --version}, which decides the options it is started with. */
class BinaryVersionTest {
    @TempDir
    Path dir;

    @Test
    void readsMongodsAndMongosOutput() {
        assertEquals(7, BinaryVersion.parseMajor("db version v7.0.14\nBuild Info: {\n    \"version\": \"7.0.14\"\n}\n"));
        assertEquals(8, BinaryVersion.parseMajor("mongos version v8.0.3\nBuild Info: {}\n"));
        assertEquals(4, BinaryVersion.parseMajor("db version v4.4.29\n"));
        assertEquals(BinaryVersion.UNKNOWN, BinaryVersion.parseMajor("usage: something else\n"));
    }

    @Test
    void runsTheBinary() throws Exception {
        Path binary = dir.resolve("mongod");
        Files.writeString(binary, "#!/bin/sh\n[ \"$1\" = --version ] && echo 'db version v6.0.19' && exit 0\nexit 3\n");
        binary.toFile().setExecutable(true);
        assertEquals(6, BinaryVersion.major(binary));
    }
}
