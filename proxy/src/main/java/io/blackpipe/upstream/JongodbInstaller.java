package io.blackpipe.upstream;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;

/**
 * Installs the pinned jongodb npm package once per machine into a cache directory and reuses it.
 * npm runs into a fresh staging directory next to the cache entry, which is then renamed into
 * place in one atomic step: two JVMs installing at once each build their own copy and one rename
 * wins, so nobody ever runs a half-installed binary.
 */
public final class JongodbInstaller {
    public static final String PACKAGE = "@jongodb/memory-server-bin-linux-x64-gnu";
    public static final String VERSION = "0.1.6";
    private static final Duration NPM_TIMEOUT = Duration.ofMinutes(5);

    private final Path cacheRoot;
    private final Path npm;

    /** @param npm the npm executable, or null when there is none (then only an existing install works) */
    public JongodbInstaller(Path cacheRoot, Path npm) {
        this.cacheRoot = cacheRoot.toAbsolutePath();
        this.npm = npm;
    }

    /** Cache root from BLACKPIPE_CACHE (default ~/.cache/blackpipe), npm from PATH. */
    public static JongodbInstaller fromEnvironment() {
        return new JongodbInstaller(defaultCacheRoot(), PathLookup.find("npm").orElse(null));
    }

    public static Path defaultCacheRoot() {
        String override = System.getenv("BLACKPIPE_CACHE");
        if (override != null && !override.isBlank()) {
            return Path.of(override);
        }
        return Path.of(System.getProperty("user.home"), ".cache", "blackpipe");
    }

    /** Where the package lives once installed: CACHE_ROOT/jongodb-0.1.6. */
    public Path installDir() {
        return cacheRoot.resolve("jongodb-" + VERSION);
    }

    /** Path of the jongodb binary inside an install (or staging) directory. */
    static Path binaryIn(Path dir) {
        return packageDir(dir).resolve("bin").resolve("jongodb");
    }

    private static Path packageDir(Path dir) {
        return dir.resolve("node_modules").resolve(PACKAGE);
    }

    /** Returns the jongodb binary, installing the package first unless a valid install exists. */
    public Path ensureInstalled() throws IOException {
        Path target = installDir();
        if (problemWith(target) == null) {
            return binaryIn(target);
        }
        Files.createDirectories(cacheRoot);
        Path staging = Files.createTempDirectory(cacheRoot, "jongodb-" + VERSION + ".staging-");
        try {
            runNpmInstall(staging);
            String problem = problemWith(staging);
            if (problem != null) {
                throw new IOException("npm installed " + PACKAGE + "@" + VERSION + " into " + staging
                        + " but the result is unusable: " + problem);
            }
            moveAsideIfBroken(target);
            try {
                Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                // Another JVM renamed its copy into place first; theirs is as good as ours.
                if (problemWith(target) != null) {
                    throw new IOException("could not move the jongodb install from " + staging + " to " + target, e);
                }
            }
            return binaryIn(target);
        } finally {
            FileTrees.deleteQuietly(staging);
        }
    }

    private void runNpmInstall(Path staging) throws IOException {
        if (npm == null) {
            throw new IOException("npm was not found on PATH, and it is needed once to install the jongodb engine ("
                    + PACKAGE + "@" + VERSION + ") into " + installDir()
                    + ". Install Node.js/npm, or point BLACKPIPE_TEST_URI at an existing replica set, or put mongod on PATH.");
        }
        Path log = staging.resolve("npm-install.log");
        List<String> command = List.of(npm.toString(), "install", "--no-save", "--no-audit", "--no-fund",
                "--prefix", staging.toString(), PACKAGE + "@" + VERSION);
        Process process;
        try {
            process = new ProcessBuilder(command).directory(staging.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
        } catch (IOException e) {
            throw new IOException("could not run npm (" + npm + ") to install " + PACKAGE + "@" + VERSION + ": " + e.getMessage(), e);
        }
        process.getOutputStream().close();
        try {
            if (!process.waitFor(NPM_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new IOException("npm install of " + PACKAGE + "@" + VERSION + " did not finish within "
                        + NPM_TIMEOUT.toMinutes() + " minutes; last lines of its output:" + System.lineSeparator()
                        + FileTrees.tail(log, 20));
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while npm was installing " + PACKAGE, e);
        }
        if (process.exitValue() != 0) {
            throw new IOException("npm install of " + PACKAGE + "@" + VERSION + " failed with exit code "
                    + process.exitValue() + " (command: " + String.join(" ", command) + "); last lines of its output:"
                    + System.lineSeparator() + FileTrees.tail(log, 20));
        }
    }

    /**
     * Null when {@code dir} holds a complete install of the pinned version, else why not. The binary
     * is checked against the sha256 in the package's own package.json, which catches truncated copies.
     */
    static String problemWith(Path dir) {
        Path binary = binaryIn(dir);
        Path manifest = packageDir(dir).resolve("package.json");
        if (!Files.isRegularFile(binary) || !Files.isRegularFile(manifest)) {
            return "no " + binary + " or no " + manifest;
        }
        if (!Files.isExecutable(binary)) {
            return binary + " is not executable";
        }
        try {
            BsonDocument json = BsonDocument.parse(Files.readString(manifest, StandardCharsets.UTF_8));
            String version = json.getString("version").getValue();
            if (!VERSION.equals(version)) {
                return manifest + " says version " + version + ", expected " + VERSION;
            }
            Optional<String> expected = Optional.ofNullable(json.getDocument("jongodb", new BsonDocument()).get("sha256"))
                    .filter(v -> v.isString()).map(v -> v.asString().getValue());
            String actual = sha256(binary);
            if (expected.isEmpty() || !expected.get().equalsIgnoreCase(actual)) {
                return binary + " has sha256 " + actual + " but " + manifest + " expects " + expected.orElse("(none)");
            }
            return null;
        } catch (IOException | RuntimeException e) {
            return "cannot check " + manifest + ": " + e;
        }
    }

    private static String sha256(Path file) throws IOException {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            try (InputStream in = new DigestInputStream(Files.newInputStream(file), digest)) {
                in.transferTo(OutputStream.nullOutputStream());
            }
            return HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM provides SHA-256", e);
        }
    }

    /** A broken entry (an interrupted old install, say) is renamed away first so the atomic move can land. */
    private static void moveAsideIfBroken(Path target) {
        if (!Files.exists(target) || problemWith(target) == null) {
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
