package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.blackpipe.testing.HeldPort;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.upstream.PathLookup;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `report` run where its progress (standard error) goes to no terminal (a CI log, a file, this test's writer):
 * one line per case, without the carriage returns and erase-line escapes that redraw it on a terminal; and
 * redrawn where standard error is a terminal. `true` as the driver: every case is quick (and a MISMATCH,
 * exit 3), through a real proxy each.
 */
class ReportCliTest {
    private static final String[] SPEC_RUN = {"report", "--spec", "--driver-cmd", "true", "--upstream", null};
    /** What redraws the progress line in place on a terminal. */
    private static final String REDRAW = "\r\u001b[2K[1/";

    @TempDir
    Path temp;

    @Test
    void progressOffATerminalIsOneLinePerCaseWithoutEscapes() {
        CliRun run = CliRun.of(specRun());
        assertEquals(3, run.exitCode(), run::toString);
        assertOneLinePerCase(run.err(), run.toString());
        assertTrue(run.out().contains("MISMATCH"), run::toString);
    }

    /**
     * From Java 22 System.console() is a Console with the output redirected too (Console.isTerminal() tells),
     * so a null check took a CI log for a terminal. Run by the newest JDK installed beside this test's (Temurin
     * 25 in /usr/lib/jvm here), with standard output piped and standard error in a file.
     */
    @Test
    void underJava22OrLaterPipedProgressIsOneLinePerCase() throws Exception {
        Optional<Path> jdk = newestJdk(22);
        assumeTrue(jdk.isPresent(), () -> "no JDK 22 or later beside " + System.getProperty("java.home")
                + " (its own is " + Runtime.version().feature() + "): set -Dblackpipe.test.jdk22=JAVA_HOME to run this");
        System.out.println("[ReportCliTest] report run by " + jdk.get() + " (Java " + javaVersion(jdk.get()).orElse("?") + ")");
        try (CliChild child = new CliChild(jdk.get(), temp, null, Map.of(), List.of(), specRun())) {
            int exit = child.awaitExit();
            String err = child.stderrText();
            assertEquals(3, exit, child::describe);
            assertOneLinePerCase(err, child.describe());
        }
    }

    /**
     * The progress goes to standard error, so standard error decides: with standard input and output on a
     * terminal and standard error in a file (`report 2>progress.log`), the JVM has a console (on any Java),
     * and the log got the escapes.
     */
    @Test
    void progressInAFileIsOneLinePerCaseWhileTheOutputIsATerminal() throws Exception {
        Path log = temp.resolve("progress.log");
        String terminal = onATerminal("2>" + quoted(log));
        assertTrue(terminal.contains("MISMATCH") && terminal.contains("\r\n"),
                () -> "the report's output went through no terminal: " + terminal);
        assertOneLinePerCase(Files.readString(log), "progress.log");
    }

    /** And progress on a terminal is redrawn in place, wherever the report itself goes (`report > report.txt`). */
    @Test
    void progressOnATerminalIsRedrawnWhileTheOutputGoesToAFile() throws Exception {
        Path report = temp.resolve("report.txt");
        String terminal = onATerminal(">" + quoted(report));
        assertTrue(terminal.contains(REDRAW), () -> "no progress redrawn on the terminal: " + terminal);
        assertTrue(Files.readString(report).contains("MISMATCH"), report::toString);
    }

    /** No mongod, no npm and an empty cache: one line saying why, as `local` says it, not a stack trace. */
    @Test
    void aLocalUpstreamThatCannotStartIsOneLineAndExitOne() throws Exception {
        Path empty = Files.createDirectories(temp.resolve("empty-path"));
        Map<String, String> env = Map.of("PATH", empty.toString(), "BLACKPIPE_CACHE", temp.resolve("cache").toString());
        try (CliChild child = new CliChild(temp, null, env, "report", "--spec", "--driver-cmd", "true")) {
            int exit = child.awaitExit();
            String err = child.stderrText();
            assertEquals(1, exit, child::describe);
            assertTrue(err.contains("blackpipe: cannot start a local upstream: "), child::describe);
            assertFalse(err.contains("\tat io.blackpipe."), child::describe);
        }
    }

    /**
     * An upstream nobody answers at: the report and --spec fail at once (not after 30 s of a driver's
     * server selection), in one line naming the seed, as `proxy` does (exit 1).
     */
    @Test
    void anUnreachableUpstreamFailsAtOnceNamingIt() {
        try (HeldPort refusing = HeldPort.any()) { // bound, not listening: refused, and given to no process that would answer
            String upstream = "mongodb://127.0.0.1:" + refusing.port() + "/";
            for (String[] args : List.of(new String[] {"report", "--upstream", upstream, "-n", "1"},
                    new String[] {"report", "--spec", "--upstream", upstream})) {
                CliRun run = CliRun.of(args);
                assertEquals(1, run.exitCode(), run::toString);
                // the proxy's own discovery, not a driver's server selection ("Timed out while waiting for a server ...")
                assertTrue(run.err().contains("blackpipe: the report failed: no upstream seed answered hello: 127.0.0.1:" + refusing.port()),
                        run::toString);
            }
        }
    }

    private static String[] specRun() {
        String[] args = SPEC_RUN.clone();
        args[args.length - 1] = UpstreamLane.uri();
        return args;
    }

    private static void assertOneLinePerCase(String progress, String context) {
        assertFalse(progress.contains("\u001b") || progress.contains("\r"), () -> "escapes in: " + context);
        List<String> lines = progress.lines().filter(line -> line.matches("\\[\\d+/\\d+] .*")).toList();
        assertTrue(lines.size() > 10, context);
        assertTrue(lines.get(0).startsWith("[1/"), lines::toString);
    }

    /**
     * Runs the spec report by this test's Java under util-linux's {@code script}, so that standard input, output
     * and error are a terminal unless {@code redirect} (shell syntax) sends one elsewhere; returns what reached
     * the terminal.
     */
    private String onATerminal(String redirect) throws Exception {
        Optional<Path> script = PathLookup.find("script");
        assumeTrue(script.isPresent(), "no `script` (util-linux) on PATH to give the report a terminal");
        Path argFile = temp.resolve("java.args");
        List<String> javaArgs = new ArrayList<>(List.of("-cp", CliChild.classPath(), "io.blackpipe.cli.Main"));
        javaArgs.addAll(List.of(specRun()));
        Files.write(argFile, javaArgs.stream().map(ReportCliTest::argFileQuoted).toList());
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String command = quoted(java) + " " + quoted("@" + argFile) + " " + redirect;
        ProcessBuilder builder = new ProcessBuilder(script.get().toString(), "-q", "-e", "-c", command, "/dev/null")
                .redirectErrorStream(true).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        builder.environment().keySet().removeIf(name -> name.startsWith("BLACKPIPE_"));
        Process process = builder.start();
        String terminal = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the report under `script` did not finish");
        assertEquals(3, process.exitValue(), terminal);
        return terminal;
    }

    private static String quoted(Object shellWord) {
        return "'" + shellWord.toString().replace("'", "'\\''") + "'";
    }

    private static String argFileQuoted(String arg) {
        return "\"" + arg.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** -Dblackpipe.test.jdk22, else the JDK of the newest Java from {@code feature} on installed beside this one. */
    private static Optional<Path> newestJdk(int feature) throws IOException {
        String given = System.getProperty("blackpipe.test.jdk22");
        if (given != null && !given.isBlank()) {
            return Optional.of(Path.of(given));
        }
        Path home = Path.of(System.getProperty("java.home"));
        if (Runtime.version().feature() >= feature) {
            return Optional.of(home);
        }
        Path installed = home.getParent();
        if (installed == null || !Files.isDirectory(installed)) {
            return Optional.empty();
        }
        try (Stream<Path> jdks = Files.list(installed)) {
            return jdks.filter(jdk -> Files.isExecutable(jdk.resolve("bin/java")))
                    .filter(jdk -> javaVersion(jdk).map(ReportCliTest::featureOf).orElse(0) >= feature)
                    .max(Comparator.comparing(jdk -> javaVersion(jdk).map(ReportCliTest::featureOf).orElse(0)));
        }
    }

    /** JAVA_VERSION of the JDK's release file ("25.0.3"). */
    private static Optional<String> javaVersion(Path jdk) {
        try {
            return Files.readAllLines(jdk.resolve("release")).stream().filter(line -> line.startsWith("JAVA_VERSION="))
                    .map(line -> line.substring("JAVA_VERSION=".length()).replace("\"", "")).findFirst();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static int featureOf(String version) {
        try {
            return Integer.parseInt(version.split("[.+-]")[0]);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
