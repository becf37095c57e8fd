package io.blackpipe.testing;

import io.blackpipe.upstream.JongodbInstaller;
import io.blackpipe.upstream.NpmCachedInstall;
import io.blackpipe.upstream.PathLookup;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import org.bson.BsonDocument;

/**
 * The repository's examples/spec-driver/node program, with its pinned npm dependencies installed by
 * {@code npm ci} into the blackpipe cache (next to jongodb), never into the checkout. The program
 * itself runs from the checkout; NODE_PATH points its {@code require} at the cached node_modules.
 */
public final class NodeSpecDriver {
    private NodeSpecDriver() {
    }

    /** examples/spec-driver/node, found from the working directory (proxy/ under Maven) upwards. */
    public static Path exampleDir() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("examples").resolve("spec-driver").resolve("node");
            if (Files.isRegularFile(candidate.resolve("spec-driver.js"))) {
                return candidate;
            }
        }
        throw new AssertionError("no examples/spec-driver/node/spec-driver.js above " + Path.of("").toAbsolutePath());
    }

    /** The mongodb version package.json pins, e.g. "7.9.0". */
    public static String pinnedDriverVersion() throws IOException {
        return manifest(exampleDir().resolve("package.json")).getDocument("dependencies").getString("mongodb").getValue();
    }

    /**
     * The {@code --driver-cmd} that runs the example with its dependencies, installing them first
     * unless the cache holds them. Fails, saying what is missing, without node or (on first use) npm.
     */
    public static String command() throws IOException {
        return commandFor(exampleDir().resolve("spec-driver.js"));
    }

    /** The shell command that runs the Node.js program {@code script} with the example's dependencies, as {@link #command}. */
    public static String commandFor(Path script) throws IOException {
        Path node = PathLookup.find("node").orElseThrow(() -> new IOException(
                "node was not found on PATH: the Node.js spec driver test needs Node.js 20.19+ and npm (CI has both)"));
        Path example = exampleDir();
        String version = pinnedDriverVersion();
        Path installed = new NpmCachedInstall("the Node spec driver's dependencies (mongodb@" + version + ")",
                JongodbInstaller.defaultCacheRoot().resolve("node-spec-driver-" + lockDigest(example)),
                staging -> {
                    Files.copy(example.resolve("package.json"), staging.resolve("package.json"));
                    Files.copy(example.resolve("package-lock.json"), staging.resolve("package-lock.json"));
                },
                staging -> List.of("ci", "--prefer-offline", "--no-audit", "--no-fund"),
                dir -> problemWith(dir, version))
                .ensure(PathLookup.find("npm").orElse(null), "npm was not found on PATH, and it is needed once to install "
                        + "mongodb@" + version + " for " + script + ". Install Node.js/npm (CI has both).");
        return "NODE_PATH=" + quoted(installed.resolve("node_modules")) + " " + quoted(node) + " " + quoted(script);
    }

    /** Null when {@code dir} holds the pinned mongodb package, else why not. */
    private static String problemWith(Path dir, String version) {
        Path manifest = dir.resolve("node_modules").resolve("mongodb").resolve("package.json");
        try {
            if (!Files.isRegularFile(manifest)) {
                return "no " + manifest;
            }
            String found = manifest(manifest).getString("version").getValue();
            return version.equals(found) ? null : manifest + " says version " + found + ", expected " + version;
        } catch (IOException | RuntimeException e) {
            return "cannot check " + manifest + ": " + e;
        }
    }

    /** A new cache entry whenever the pins change, so an old install is never taken for the new one. */
    private static String lockDigest(Path example) throws IOException {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(Files.readAllBytes(example.resolve("package.json")));
            digest.update(Files.readAllBytes(example.resolve("package-lock.json")));
            return HexFormat.of().formatHex(digest.digest()).substring(0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM provides SHA-256", e);
        }
    }

    private static BsonDocument manifest(Path packageJson) throws IOException {
        return BsonDocument.parse(Files.readString(packageJson, StandardCharsets.UTF_8));
    }

    private static String quoted(Path path) {
        return "'" + path.toString().replace("'", "'\\''") + "'";
    }
}
