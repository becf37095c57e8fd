package io.blackpipe.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PathLookupTest {
    @TempDir
    Path dir;

    @Test
    void findsTheFirstExecutableInPathOrder() throws IOException {
        Path first = Files.createDirectories(dir.resolve("first"));
        Path second = Files.createDirectories(dir.resolve("second"));
        Path inSecond = executable(second.resolve("mongod"));
        assertEquals(Optional.of(inSecond), PathLookup.find("mongod", first + File.pathSeparator + second));

        Path inFirst = executable(first.resolve("mongod"));
        assertEquals(Optional.of(inFirst), PathLookup.find("mongod", first + File.pathSeparator + second));
    }

    @Test
    void skipsFilesThatAreNotExecutableAndDirectories() throws IOException {
        Path plain = Files.createDirectories(dir.resolve("plain"));
        Files.writeString(plain.resolve("mongod"), "not a program");
        Path nested = Files.createDirectories(dir.resolve("nested").resolve("mongod"));
        assertEquals(Optional.empty(), PathLookup.find("mongod", plain + File.pathSeparator + nested.getParent()));
    }

    @Test
    void emptyOrMissingPathFindsNothing() {
        assertEquals(Optional.empty(), PathLookup.find("mongod", null));
        assertEquals(Optional.empty(), PathLookup.find("mongod", ""));
        assertEquals(Optional.empty(), PathLookup.find("mongod", dir.resolve("does-not-exist").toString()));
    }

    @Test
    void findsARealProgramOnThisMachinesPath() {
        // Every POSIX system running these tests has sh; this checks the no-argument variant reads PATH.
        assertEquals(true, PathLookup.find("sh").isPresent(), "sh on PATH=" + System.getenv("PATH"));
    }

    @Test
    void onWindowsFindsTheProgramByAPathextSuffix() throws IOException {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path exe = executable(bin.resolve("mongod.exe"));
        assertEquals(Optional.empty(), PathLookup.find("mongod", bin.toString()), "a POSIX shell wants the name itself");
        assertEquals(Optional.of(exe), PathLookup.find("mongod", bin.toString(), PathLookup.windowsSuffixes(".COM;.EXE;.BAT;.CMD")));
        assertEquals(Optional.of(exe), PathLookup.find("mongod", bin.toString(), PathLookup.windowsSuffixes(null)), "PATHEXT unset");
    }

    @Test
    void pathextGivesItsSuffixesInOrderAndCmdsDefaultWhenUnset() {
        assertEquals(List.of(".com", ".exe", ".bat", ".cmd"), PathLookup.windowsSuffixes(null));
        assertEquals(List.of(".com", ".exe", ".bat", ".cmd"), PathLookup.windowsSuffixes(" "));
        assertEquals(List.of(".exe", ".ps1"), PathLookup.windowsSuffixes(".EXE;;.Ps1;"));
    }

    private static Path executable(Path file) throws IOException {
        Files.writeString(file, "#!/bin/sh\nexit 0\n");
        file.toFile().setExecutable(true);
        return file.toAbsolutePath();
    }
}
