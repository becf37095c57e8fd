package io.blackpipe.upstream;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * An npm install kept in a cache directory and reused. npm runs into a fresh staging directory
 * next to the cache entry, which is then renamed into place in one atomic step: two JVMs
 * installing at once each build their own copy and one rename wins, so nobody ever uses a
 * half-installed package.
 *
 * @param what         what is installed, for messages, e.g. "@jongodb/memory-server-bin-linux-x64-gnu@0.1.6"
 * @param target       the cache entry
 * @param layout       puts what npm needs into the empty staging directory (a package.json, say)
 * @param npmArguments npm's arguments (after the executable), given the staging directory
 * @param check        null when a directory holds a complete, usable install, else why not
 */
public record NpmCachedInstall(String what, Path target, Layout layout, Function<Path, List<String>> npmArguments,
                               Function<Path, String> check) {
    private static final Duration NPM_TIMEOUT = Duration.ofMinutes(5);

    /** Lays out the staging directory before npm runs in it. */
    public interface Layout {
        Layout NOTHING = staging -> { };

        void into(Path staging) throws IOException;
    }

    public NpmCachedInstall {
        target = target.toAbsolutePath();
    }

    /**
     * Returns {@link #target()}, installing into it first unless it holds a usable install.
     *
     * @param npm       the npm executable, or null when there is none (then only an existing install works)
     * @param withoutNpm the message when npm is needed and null: what it is needed for, what else to do
     */
    public Path ensure(Path npm, String withoutNpm) throws IOException {
        deleteLeftovers(); // every time: a run killed during its install is followed by runs that find the cache whole
        if (check.apply(target) == null) {
            return target;
        }
        if (npm == null) {
            throw new IOException(withoutNpm);
        }
        // a first install takes a minute or more, and said nothing meanwhile; a damaged one was replaced unsaid
        String problem = Files.exists(target) ? check.apply(target) : null;
        System.getLogger("blackpipe").log(System.Logger.Level.INFO, problem == null
                ? "installing " + what + " from the npm registry into " + target + " (once; a minute or so)"
                : "the install of " + what + " in " + target + " is unusable (" + problem + "): installing it again");
        Files.createDirectories(target.getParent());
        Path staging = Files.createTempDirectory(target.getParent(), target.getFileName() + ".staging-");
        try {
            layout.into(staging);
            runNpm(npm, staging);
            String unusable = check.apply(staging);
            if (unusable != null) {
                throw new IOException("npm installed " + what + " into " + staging + " but the result is unusable: " + unusable);
            }
            moveAsideIfBroken();
            try {
                Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                // Another JVM renamed its copy into place first; theirs is as good as ours.
                if (check.apply(target) != null) {
                    throw new IOException("could not move the install of " + what + " from " + staging + " to " + target, e);
                }
            }
            return target;
        } finally {
            FileTrees.deleteQuietly(staging);
        }
    }

    /**
     * Removes the staging and set-aside directories of installs an hour old or more: a JVM killed while npm ran (SIGKILL,
     * a CI timeout) left its staging directory, 20 MB, in the cache for good. Younger ones may be another JVM's install
     * under way (npm has five minutes).
     */
    private void deleteLeftovers() {
        if (!Files.isDirectory(target.getParent())) {
            return;
        }
        String prefix = target.getFileName().toString();
        long anHourAgo = System.currentTimeMillis() - Duration.ofHours(1).toMillis();
        try (var siblings = Files.list(target.getParent())) {
            siblings.filter(p -> p.getFileName().toString().startsWith(prefix + ".staging-") || p.getFileName().toString().startsWith(prefix + ".broken-"))
                    .filter(p -> {
                        try {
                            return Files.getLastModifiedTime(p).toMillis() < anHourAgo;
                        } catch (IOException gone) {
                            return false;
                        }
                    })
                    .forEach(FileTrees::deleteQuietly);
        } catch (IOException e) {
            // an unreadable cache directory: the install below says so
        }
    }

    private void runNpm(Path npm, Path staging) throws IOException {
        Path log = staging.resolve("npm-install.log");
        List<String> command = new ArrayList<>();
        command.add(npm.toString());
        command.addAll(npmArguments.apply(staging));
        Process process;
        try {
            process = new ProcessBuilder(command).directory(staging.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
        } catch (IOException e) {
            throw new IOException("could not run npm (" + npm + ") to install " + what + ": " + e.getMessage(), e);
        }
        process.getOutputStream().close();
        try {
            if (!process.waitFor(NPM_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new IOException("npm install of " + what + " did not finish within " + NPM_TIMEOUT.toMinutes()
                        + " minutes; last lines of its output:" + System.lineSeparator() + FileTrees.tail(log, 20));
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while npm was installing " + what, e);
        }
        if (process.exitValue() != 0) {
            throw new IOException("npm install of " + what + " failed with exit code " + process.exitValue()
                    + " (command: " + String.join(" ", command) + "); last lines of its output:"
                    + System.lineSeparator() + FileTrees.tail(log, 20));
        }
    }

    /** A broken entry (an interrupted old install, say) is renamed away first so the atomic move can land. */
    private void moveAsideIfBroken() {
        if (!Files.exists(target) || check.apply(target) == null) {
            return;
        }
        Path aside = target.resolveSibling(target.getFileName() + ".broken-" + System.nanoTime());
        try {
            Files.move(target, aside, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException raced) {
            // Another JVM moved or replaced it already; the move below decides.
            return;
        }
        FileTrees.deleteQuietly(aside);
    }
}
