package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class CommandNamesTest {
    @Test
    void knownNamesPassAndAnythingElseIsOther() {
        assertEquals("insert", CommandNames.label("insert"));
        assertEquals("other", CommandNames.label("frobnicate"));
        assertEquals("isMaster", CommandNames.label("isMaster"), "hello's names stay apart");
        assertEquals("ismaster", CommandNames.label("ismaster"));
    }

    @Test
    void aCommandsOtherServerNameCountsUnderItsOwn() {
        assertEquals("findAndModify", CommandNames.label("findandmodify"), "the legacy shell's spelling");
        assertEquals("dropIndexes", CommandNames.label("deleteIndexes"));
        assertEquals("mapReduce", CommandNames.label("mapreduce"));
        assertEquals("buildInfo", CommandNames.label("buildinfo"));
    }
}
