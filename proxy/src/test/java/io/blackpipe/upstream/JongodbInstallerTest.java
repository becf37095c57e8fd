package io.blackpipe.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import io.blackpipe.testing.LogCapture;
import java.nio.file.Path;
import java.time.Instant;
import java.time.Duration;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Install, reuse, races and failures, with a fake npm script standing in for the registry. */
class JongodbInstallerTest {
    private static final String FAKE_BINARY = "#!/bin/sh\necho fake jongodb\n";

    @TempDir
    Path dir;

    @Test
    void installsOnceThenReusesTheCacheEvenWithoutNpm() throws Exception {
        Path cache = dir.resolve("cache");
        Path binary = onLinux(cache, fakeNpm("")).ensureInstalled();
        assertEquals(cache.resolve("jongodb-0.1.6/node_modules/@jongodb/memory-server-bin-linux-x64-gnu/bin/jongodb").toAbsolutePath(), binary);
        assertEquals(FAKE_BINARY, Files.readString(binary));

        assertEquals(binary, onLinux(cache, fakeNpm("")).ensureInstalled());
        assertEquals(binary, onLinux(cache, null).ensureInstalled());
        assertEquals(1, npmRuns(), "npm ran once; later calls reused the install");
        assertEquals(List.of("jongodb-0.1.6"), entries(cache), "no staging directories are left behind");
    }

    @Test
    void concurrentInstallersAllGetOneCompleteInstall() throws Exception {
        Path cache = dir.resolve("cache");
        Path npm = fakeNpm("sleep 0.3");
        int racers = 4;
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(racers);
        try {
            List<Future<Path>> results = new ArrayList<>();
            for (int i = 0; i < racers; i++) {
                results.add(pool.submit(() -> {
                    go.await();
                    return onLinux(cache, npm).ensureInstalled();
                }));
            }
            go.countDown();
            for (Future<Path> result : results) {
                assertEquals(onLinux(cache, npm).installDir().resolve(
                        "node_modules/@jongodb/memory-server-bin-linux-x64-gnu/bin/jongodb"), result.get());
            }
        } finally {
            pool.shutdownNow();
        }
        assertNull(JongodbInstaller.problemWith(cache.resolve("jongodb-0.1.6")));
        assertTrue(npmRuns() >= 1 && npmRuns() <= racers, "npm runs: " + npmRuns());
        assertEquals(List.of("jongodb-0.1.6"), entries(cache), "losers cleaned up their staging directories");
    }

    /** A first install took a minute and said nothing; a damaged one was replaced unsaid. Both are said now. */
    @Test
    void aBrokenInstallIsReplaced() throws Exception {
        Path cache = dir.resolve("cache");
        Path binary;
        try (LogCapture log = LogCapture.start()) {
            binary = onLinux(cache, fakeNpm("")).ensureInstalled();
            log.awaitContaining(Duration.ofSeconds(5), "installing @jongodb/memory-server-bin-linux-x64-gnu@0.1.6 from the npm registry into "
                    + cache.resolve("jongodb-0.1.6").toAbsolutePath() + " (once; a minute or so)");
        }
        Files.writeString(binary, "#!/bin/sh\n"); // truncated: no longer matches the manifest's sha256
        assertTrue(JongodbInstaller.problemWith(cache.resolve("jongodb-0.1.6")).contains("sha256"));

        try (LogCapture log = LogCapture.start()) {
            assertEquals(binary, onLinux(cache, fakeNpm("")).ensureInstalled());
            log.awaitContaining(Duration.ofSeconds(5), "is unusable (", "sha256", "): installing it again");
        }
        assertEquals(FAKE_BINARY, Files.readString(binary));
        assertEquals(List.of("jongodb-0.1.6"), entries(cache));
    }

    /** A JVM killed while npm ran left its staging directory (20 MB) in the cache for good; one under way stays. */
    @Test
    void anInstallRemovesTheStagingAnInstallKilledAnHourAgoLeft() throws Exception {
        Path cache = Files.createDirectories(dir.resolve("cache"));
        Path killed = Files.createDirectories(cache.resolve("jongodb-0.1.6.staging-123/node_modules"));
        Path underWay = Files.createDirectories(cache.resolve("jongodb-0.1.6.staging-456"));
        Path otherVersion = Files.createDirectories(cache.resolve("jongodb-0.1.5.staging-789"));
        FileTime twoHoursAgo = FileTime.from(Instant.now().minus(Duration.ofHours(2)));
        Files.setLastModifiedTime(killed.getParent(), twoHoursAgo);
        Files.setLastModifiedTime(otherVersion, twoHoursAgo);

        onLinux(cache, fakeNpm("")).ensureInstalled();
        assertEquals(List.of("jongodb-0.1.5.staging-789", "jongodb-0.1.6", "jongodb-0.1.6.staging-456"), entries(cache));
        assertTrue(Files.exists(underWay));

        // and a start that finds the cache whole: the runs after the one killed during its install
        Path killedLater = Files.createDirectories(cache.resolve("jongodb-0.1.6.staging-999"));
        Files.setLastModifiedTime(killedLater, twoHoursAgo);
        onLinux(cache, null).ensureInstalled(); // no npm: the install is there
        assertEquals(List.of("jongodb-0.1.5.staging-789", "jongodb-0.1.6", "jongodb-0.1.6.staging-456"), entries(cache));
    }

    @Test
    void npmFailureQuotesTheEndOfNpmsOutput() throws Exception {
        Path npm = fakeNpm("echo 'npm ERR! code E404'; echo 'npm ERR! 404 Not Found - GET https://registry.npmjs.org/x'; exit 1");
        IOException e = assertThrows(IOException.class, () -> onLinux(dir.resolve("cache"), npm).ensureInstalled());
        assertTrue(e.getMessage().contains("failed with exit code 1"), e.getMessage());
        assertTrue(e.getMessage().contains("404 Not Found"), e.getMessage());
        assertEquals(List.of(), entries(dir.resolve("cache")), "the failed staging directory is removed");
    }

    @Test
    void npmThatInstallsNothingIsReported() throws Exception {
        Path npm = fakeNpm("exit 0");
        IOException e = assertThrows(IOException.class, () -> onLinux(dir.resolve("cache"), npm).ensureInstalled());
        assertTrue(e.getMessage().contains("the result is unusable"), e.getMessage());
    }

    @Test
    void missingNpmSaysWhatToDo() {
        IOException e = assertThrows(IOException.class, () -> onLinux(dir.resolve("cache"), null).ensureInstalled());
        assertTrue(e.getMessage().startsWith("npm was not found on PATH"), e.getMessage());
        assertTrue(e.getMessage().contains("BLACKPIPE_TEST_URI"), e.getMessage());
    }

    @Test
    void aMachineThePackageIsNotBuiltForIsToldWhatToDoInstead() throws Exception {
        Path npm = fakeNpm("");
        IOException e = assertThrows(IOException.class,
                () -> new JongodbInstaller(dir.resolve("cache"), npm, "Mac OS X", "aarch64").ensureInstalled());
        assertEquals("the jongodb engine (@jongodb/memory-server-bin-linux-x64-gnu@0.1.6) is built for Linux on x86-64 only, and"
                + " this machine is Mac OS X on aarch64: put mongod on PATH (local, report and the tests then start a 3-member"
                + " replica set of it), or name a deployment (report --upstream URI; the tests: BLACKPIPE_TEST_URI; and with"
                + " Docker running, the tests start a mongo container)", e.getMessage());
        assertEquals(0, npmRuns(), "npm is not asked for a package it would refuse");
        assertNull(JongodbInstaller.platformProblem("Linux", "amd64"));
        assertNull(JongodbInstaller.platformProblem("Linux", "x86_64"));
        assertTrue(JongodbInstaller.platformProblem("Linux", "aarch64").contains("this machine is Linux on aarch64"));
        assertTrue(JongodbInstaller.platformProblem("Windows 11", "amd64").contains("this machine is Windows 11 on amd64"));
    }

    /** A container's random user has no passwd entry: the JVM's user.home is "?", and the cache went to ./?/.cache. */
    @Test
    void cacheRootHonoursTheEnvironment() {
        assertEquals(Path.of("/c"), JongodbInstaller.cacheRoot(Map.of("BLACKPIPE_CACHE", "/c", "HOME", "/h")::get, "/u"));
        assertEquals(Path.of("/x/blackpipe"), JongodbInstaller.cacheRoot(Map.of("XDG_CACHE_HOME", "/x", "HOME", "/h")::get, "/u"));
        assertEquals(Path.of("/h/.cache/blackpipe"), JongodbInstaller.cacheRoot(Map.of("HOME", "/h")::get, "?"));
        assertEquals(Path.of("/u/.cache/blackpipe"), JongodbInstaller.cacheRoot(Map.<String, String>of()::get, "/u"));
        // no guess at a shared place (the temporary directory): another user could put a binary there for us to run
        IllegalStateException none = assertThrows(IllegalStateException.class, () -> JongodbInstaller.cacheRoot(Map.<String, String>of()::get, "?"));
        assertTrue(none.getMessage().contains("set BLACKPIPE_CACHE to a directory of this user's"), none.getMessage());
    }

    /** The installer as on Linux x86-64, the one platform the package is built for, whatever runs the test. */
    private static JongodbInstaller onLinux(Path cache, Path npm) {
        return new JongodbInstaller(cache, npm, "Linux", "amd64");
    }

    /**
     * A stand-in for npm: records each run, then (unless {@code beforeInstall} exits first) lays out
     * the package the way npm does, with a package.json whose sha256 matches the fake binary.
     */
    private Path fakeNpm(String beforeInstall) throws Exception {
        String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(FAKE_BINARY.getBytes(StandardCharsets.UTF_8)));
        String script = "#!/bin/sh\n"
                + "echo run >> '" + dir.resolve("npm-runs") + "'\n"
                + "while [ $# -gt 0 ]; do if [ \"$1\" = --prefix ]; then prefix=\"$2\"; fi; shift; done\n"
                + beforeInstall + "\n"
                + "pkg=\"$prefix/node_modules/@jongodb/memory-server-bin-linux-x64-gnu\"\n"
                + "mkdir -p \"$pkg/bin\"\n"
                + "printf '" + FAKE_BINARY.replace("\n", "\\n") + "' > \"$pkg/bin/jongodb\"\n"
                + "chmod +x \"$pkg/bin/jongodb\"\n"
                + "printf '{\"name\": \"@jongodb/memory-server-bin-linux-x64-gnu\", \"version\": \"0.1.6\", "
                + "\"jongodb\": {\"binary\": \"bin/jongodb\", \"sha256\": \"" + sha + "\"}}' > \"$pkg/package.json\"\n";
        Path npm = Files.createTempFile(dir, "npm", ".sh");
        Files.writeString(npm, script);
        npm.toFile().setExecutable(true);
        return npm;
    }

    private long npmRuns() throws IOException {
        Path runs = dir.resolve("npm-runs");
        return Files.exists(runs) ? Files.readAllLines(runs).size() : 0;
    }

    private static List<String> entries(Path directory) throws IOException {
        if (!Files.exists(directory)) {
            return List.of();
        }
        try (Stream<Path> list = Files.list(directory)) {
            return list.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
