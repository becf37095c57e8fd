package io.blackpipe.upstream;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.bson.BsonDocument;

/**
 * Installs the pinned jongodb npm package once per machine into a cache directory and reuses it
 * (see {@link NpmCachedInstall}: two JVMs installing at once never run a half-installed binary).
 */
public final class JongodbInstaller {
    public static final String PACKAGE = "@jongodb/memory-server-bin-linux-x64-gnu";
    public static final String VERSION = "0.1.6";
    /** The test suite's ways to an upstream without npm: its message, unless the CLI names its own. */
    public static final String TESTS_OTHER_WAYS = "point BLACKPIPE_TEST_URI at an existing replica set, or put mongod on PATH";

    private final Path cacheRoot;
    private final Path npm;
    /** Why the package cannot run on this machine, or null when it can. */
    private final String platformProblem;

    /** @param npm the npm executable, or null when there is none (then only an existing install works) */
    public JongodbInstaller(Path cacheRoot, Path npm) {
        this(cacheRoot, npm, System.getProperty("os.name"), System.getProperty("os.arch"));
    }

    /** As on a machine whose JVM reports these os.name and os.arch. */
    JongodbInstaller(Path cacheRoot, Path npm, String osName, String osArch) {
        this.cacheRoot = cacheRoot.toAbsolutePath();
        this.npm = npm;
        this.platformProblem = platformProblem(osName, osArch);
    }

    /**
     * Why jongodb cannot run on a machine whose JVM reports these, or null when it can: the package is
     * built for Linux on x86-64 alone, and npm would refuse it elsewhere with its own words (EBADPLATFORM).
     */
    static String platformProblem(String osName, String osArch) {
        if ("Linux".equals(osName) && ("amd64".equals(osArch) || "x86_64".equals(osArch))) {
            return null;
        }
        return "the jongodb engine (" + PACKAGE + "@" + VERSION + ") is built for Linux on x86-64 only, and this machine is "
                + osName + " on " + osArch + ": put mongod on PATH (local, report and the tests then start a 3-member replica set"
                + " of it), or name a deployment (report --upstream URI; the tests: BLACKPIPE_TEST_URI; and with Docker"
                + " running, the tests start a mongo container)";
    }

    /** Cache root as {@link #defaultCacheRoot} finds it, npm from PATH. */
    public static JongodbInstaller fromEnvironment() throws IOException {
        try {
            return new JongodbInstaller(defaultCacheRoot(), PathLookup.find("npm").orElse(null));
        } catch (IllegalStateException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /**
     * BLACKPIPE_CACHE, else XDG_CACHE_HOME/blackpipe, else $HOME/.cache/blackpipe, else the JVM's user.home's. A
     * container's random user has no passwd entry, and the JVM's user.home is then "?": the cache went to ./?/.cache (or
     * failed on a read-only root) whatever HOME said. With no home at all, no place is guessed: a shared one (the
     * temporary directory) would run a binary another user put there.
     *
     * @throws IllegalStateException naming BLACKPIPE_CACHE, when there is no home
     */
    public static Path defaultCacheRoot() {
        return cacheRoot(System::getenv, System.getProperty("user.home"));
    }

    static Path cacheRoot(Function<String, String> environment, String userHome) {
        String override = environment.apply("BLACKPIPE_CACHE");
        if (override != null && !override.isBlank()) {
            return Path.of(override);
        }
        String xdg = environment.apply("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isBlank()) {
            return Path.of(xdg, "blackpipe");
        }
        for (String home : new String[] {environment.apply("HOME"), userHome}) {
            if (home != null && !home.isBlank() && !home.equals("?")) {
                return Path.of(home, ".cache", "blackpipe");
            }
        }
        throw new IllegalStateException("there is no home directory to keep jongodb in (HOME is unset, and this user has none):"
                + " set BLACKPIPE_CACHE to a directory of this user's (one already filled may be read-only)");
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

    /** Returns the jongodb binary, installing the package first unless a valid install exists; no npm names the tests' other ways. */
    public Path ensureInstalled() throws IOException {
        return ensureInstalled(TESTS_OTHER_WAYS);
    }

    /**
     * As {@link #ensureInstalled()}; {@code otherWays} says what to do instead of installing npm where it is raised (the
     * CLI's `proxy --upstream URI` is no test's BLACKPIPE_TEST_URI), e.g. "put mongod on PATH".
     */
    public Path ensureInstalled(String otherWays) throws IOException {
        if (platformProblem != null) {
            throw new IOException(platformProblem);
        }
        NpmCachedInstall install = new NpmCachedInstall(PACKAGE + "@" + VERSION, installDir(), NpmCachedInstall.Layout.NOTHING,
                staging -> List.of("install", "--no-save", "--no-audit", "--no-fund", "--prefix", staging.toString(),
                        PACKAGE + "@" + VERSION),
                JongodbInstaller::problemWith);
        return binaryIn(install.ensure(npm, "npm was not found on PATH, and it is needed once to install the jongodb engine ("
                + PACKAGE + "@" + VERSION + ") into " + installDir()
                + ". Install Node.js/npm, or " + otherWays + "."));
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
}
