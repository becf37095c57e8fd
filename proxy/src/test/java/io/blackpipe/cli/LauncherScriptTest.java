package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.blackpipe.upstream.PathLookup;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The repository's {@code ./blackpipe} launcher, run by bash in a scratch checkout whose jar is
 * already built (so no Maven runs) with a {@code java} on PATH that prints what it was given.
 * A proxy keeps reading classes from its jar for as long as it runs; a rebuild rewrites
 * proxy/target/blackpipe.jar in place, so the launcher must start the JVM from a copy that no
 * later build touches.
 */
class LauncherScriptTest {
    @TempDir
    Path checkout;

    @Test
    void aRebuildNeverRewritesTheJarARunningProxyReads() throws Exception {
        Path jar = scratchCheckout();
        writeInPlace(jar, "build one");
        Path first = Path.of(launch(null).get(2));
        assertTrue(first.startsWith(checkout.resolve("proxy/target/run")), first::toString);
        assertEquals("build one", Files.readString(first));

        try (FileChannel heldByTheRunningProxy = FileChannel.open(first, StandardOpenOption.READ)) {
            writeInPlace(jar, "build two, longer"); // as the build writes it: same file, new bytes
            Path second = Path.of(launch(null).get(2));
            assertNotEquals(first, second, "a new build runs from a new copy");
            assertEquals("build two, longer", Files.readString(second));
            assertEquals("build one", read(heldByTheRunningProxy), "the first proxy's jar is unchanged");
            assertFalse(Files.exists(first), "the old copy is unlinked (its reader keeps it), not left to pile up");
            assertEquals(second, Path.of(launch(null).get(2)), "no new copy without a new build");
        }
    }

    /**
     * CI jobs started together from one checkout whose jar is older than the sources: each built the jar over the others'
     * half-written one and ran (and copied) a jar cut short. One launcher at a time now checks, builds and copies. The
     * build here is a fake mvn that writes the jar slowly, as a real one takes its time, and counts its runs.
     */
    @Test
    void launchersStartedTogetherBuildOnceAndAllRunTheWholeJar() throws Exception {
        Path jar = scratchCheckout();
        writeInPlace(jar, "an old build");
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().minusSeconds(7200))); // older than the sources
        Path builds = checkout.resolve("builds.log");
        Path fakeMvn = checkout.resolve("bin/mvn");
        Files.writeString(fakeMvn, "#!/bin/sh\necho build >> '" + builds + "'\nprintf 'the new ' > '" + jar + "'\nsleep 1\n"
                + "printf 'build, whole' >> '" + jar + "'\n");
        Files.setPosixFilePermissions(fakeMvn, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<java.util.concurrent.CompletableFuture<List<String>>> launchers = new java.util.ArrayList<>();
        for (int i = 0; i < 3; i++) {
            launchers.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return launch(null, "--version");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (java.util.concurrent.CompletableFuture<List<String>> launcher : launchers) {
            List<String> args = launcher.get(60, TimeUnit.SECONDS);
            Path ran = Path.of(args.get(args.indexOf("-jar") + 1));
            assertEquals("the new build, whole", Files.readString(ran), "each ran the build whole, not one cut short");
        }
        assertEquals(List.of("build"), Files.readAllLines(builds), "one build for the three");
        Process free = new ProcessBuilder("flock", "-n", checkout.resolve("proxy/target/.blackpipe-launcher.lock").toString(), "true").start();
        assertEquals(0, free.waitFor(), "the lock went with them: the JVMs they started do not hold it");
    }

    /**
     * A launcher killed while it built (a CI timeout) must leave no lock the next one waits on: flock's goes with its
     * holder. (A lock file of the launcher's own making was taken over by a pid check, racing, or never, when the pid
     * had been reused.)
     */
    @Test
    void aLauncherKilledWhileItBuildsLeavesNoLockBehind() throws Exception {
        Path jar = scratchCheckout();
        writeInPlace(jar, "an old build");
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().minusSeconds(7200)));
        Path fakeMvn = checkout.resolve("bin/mvn");
        Files.writeString(fakeMvn, "#!/bin/sh\nsleep 300\n");
        Files.setPosixFilePermissions(fakeMvn, PosixFilePermissions.fromString("rwxr-xr-x"));
        ProcessBuilder stuck = new ProcessBuilder("bash", checkout.resolve("blackpipe").toString(), "--version").redirectErrorStream(true);
        stuck.environment().put("PATH", checkout.resolve("bin") + ":" + System.getenv("PATH"));
        Process launcher = stuck.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (launcher.descendants().noneMatch(p -> p.info().commandLine().orElse("").contains("sleep 300")) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        launcher.descendants().forEach(ProcessHandle::destroyForcibly); // SIGKILL, the build with it
        launcher.destroyForcibly();
        assertTrue(launcher.waitFor(10, TimeUnit.SECONDS));

        Files.writeString(fakeMvn, "#!/bin/sh\nprintf 'built after the kill' > '" + jar + "'\n");
        List<String> args = launch(null, "--version"); // within the test's 120 s: it does not wait on the dead one
        assertEquals("built after the kill", Files.readString(Path.of(args.get(args.indexOf("-jar") + 1))));
    }

    /** A checkout whose lock cannot be written (read-only, another user's) still runs its built jar: locking is for builds. */
    @Test
    void aLockThatCannotBeWrittenIsNoReasonNotToRun() throws Exception {
        writeInPlace(scratchCheckout(), "a fresh build");
        Files.createDirectories(checkout.resolve("proxy/target/.blackpipe-launcher.lock")); // no file can be opened there
        List<String> args = launch(null, "--version");
        assertEquals("a fresh build", Files.readString(Path.of(args.get(args.indexOf("-jar") + 1))));
    }

    @Test
    void theJvmGetsParallelGcUnlessBlackpipeJavaOptsSaysOtherwise() throws Exception {
        writeInPlace(scratchCheckout(), "a jar");
        List<String> args = launch(null, "--version");
        assertEquals(List.of("-XX:+UseParallelGC", "-jar"), args.subList(0, 2));
        assertEquals("--version", args.get(3));
        assertEquals(List.of("-Xmx64m", "-jar"), launch("-Xmx64m", "--version").subList(0, 2));
        assertEquals("-jar", launch("", "--version").get(0), "set empty: the JVM's defaults");
    }

    /**
     * The README's commands that keep running (proxy, local) start through ./blackpipe: from
     * proxy/target/blackpipe.jar itself, a later rebuild pulls classes from under the proxy (a real
     * one, started as the README said, failed to load Netty's classes and hung on Ctrl-C).
     */
    @Test
    void theReadmeNeverStartsALongRunningCommandFromTheJarABuildRewrites() throws IOException {
        List<String> fromTheBuildsJar = Files.readAllLines(repository().resolve("README.md")).stream().map(String::strip)
                .filter(line -> line.matches("java (-\\S+ )*-jar proxy/target/blackpipe\\.jar (proxy|local|report)\\b.*"))
                .toList();
        assertEquals(List.of(), fromTheBuildsJar);
    }

    /**
     * What the scripts' builds print goes to standard error, a CI log or a terminal: `mvn -B -q` alone still wrote
     * jansi's reset code (ESC[0m) there on Maven 3.8/3.9, on success too. Real Maven (the one on PATH), on a
     * project of pom modules that builds in a second, offline or not, as the script runs it.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"blackpipe, proxy", "bench/run, bench", "bench/per-command, bench"})
    void theBuildsTheScriptsRunPrintNoEscapeCodes(String script, String module) throws Exception {
        assumeTrue(PathLookup.find("mvn").isPresent(), "no mvn on PATH");
        Path jar = scratchCheckout();
        Files.createDirectories(checkout.resolve(script).getParent());
        Files.copy(repository().resolve(script), checkout.resolve(script), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Files.createDirectories(checkout.resolve(module + "/target"));
        Files.writeString(checkout.resolve("pom.xml"), pom("root", "<modules><module>" + module + "</module></modules>"));
        Files.writeString(checkout.resolve(module + "/pom.xml"), pom(module, ""));
        Files.createDirectories(checkout.resolve("bench/target"));
        Files.writeString(checkout.resolve("bench/target/classpath.txt"), "");
        writeInPlace(jar, "an old build");
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().minusSeconds(7200))); // older than the sources: rebuilt

        List<String> output = run(script, null);
        assertTrue(output.get(0).contains("building"), output::toString);
        assertTrue(output.contains("-cp") || output.contains("-jar"), () -> "the build passed, then java ran: " + output);
        assertFalse(output.toString().contains("\u001b"), () -> "escape codes in: " + output.toString().replace("\u001b", "ESC"));
    }

    private static String pom(String artifactId, String inside) {
        return "<project><modelVersion>4.0.0</modelVersion><groupId>blackpipe.test</groupId><artifactId>" + artifactId
                + "</artifactId><version>1</version><packaging>pom</packaging>" + inside + "</project>";
    }

    /** A checkout with the launcher and the source paths it compares the jar's age to, all older than the jar. */
    private Path scratchCheckout() throws IOException {
        Files.copy(repository().resolve("blackpipe"), checkout.resolve("blackpipe"));
        for (String dir : List.of("proxy/src/main", "fault-scripts", "proxy/target", "bin")) {
            Files.createDirectories(checkout.resolve(dir));
        }
        Files.writeString(checkout.resolve("pom.xml"), "<project/>");
        Files.writeString(checkout.resolve("proxy/pom.xml"), "<project/>");
        FileTime old = FileTime.from(Instant.now().minusSeconds(3600));
        for (String path : List.of("proxy/src/main", "fault-scripts", "pom.xml", "proxy/pom.xml")) {
            Files.setLastModifiedTime(checkout.resolve(path), old);
        }
        Path fakeJava = checkout.resolve("bin/java");
        Files.writeString(fakeJava, "#!/bin/sh\nprintf '%s\\n' \"$@\"\n");
        Files.setPosixFilePermissions(fakeJava, PosixFilePermissions.fromString("rwxr-xr-x"));
        return checkout.resolve("proxy/target/blackpipe.jar");
    }

    private static void writeInPlace(Path jar, String content) throws IOException {
        try (FileChannel channel = FileChannel.open(jar, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            channel.write(ByteBuffer.wrap(content.getBytes(StandardCharsets.UTF_8)));
        }
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now()));
    }

    private static String read(FileChannel channel) throws IOException {
        ByteBuffer bytes = ByteBuffer.allocate(64);
        channel.read(bytes, 0);
        return new String(bytes.array(), 0, bytes.position(), StandardCharsets.UTF_8);
    }

    /** Runs the launcher with BLACKPIPE_JAVA_OPTS (null: unset); the arguments the fake java got, one per element. */
    private List<String> launch(String javaOpts, String... args) throws Exception {
        return run("blackpipe", javaOpts, args);
    }

    /** Runs {@code script} of the scratch checkout; what it printed (the fake java's arguments, one per line). */
    private List<String> run(String script, String javaOpts, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("bash", checkout.resolve(script).toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("PATH", checkout.resolve("bin") + ":" + System.getenv("PATH"));
        builder.environment().remove("BLACKPIPE_JAVA_OPTS");
        builder.environment().remove("BENCH_SKIP_BUILD");
        builder.environment().remove("BENCH_JAVA_OPTS");
        builder.environment().put("JAVA_HOME", System.getProperty("java.home")); // Maven's own java, not the fake one on PATH
        if (javaOpts != null) {
            builder.environment().put("BLACKPIPE_JAVA_OPTS", javaOpts);
        }
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "the launcher did not finish");
        assertEquals(0, process.exitValue(), output);
        return output.lines().toList();
    }

    /** The checkout this test runs in: the first directory up from here with the launcher. */
    private static Path repository() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("blackpipe")) && Files.isRegularFile(dir.resolve("pom.xml"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no ./blackpipe launcher above " + Path.of("").toAbsolutePath());
    }
}
