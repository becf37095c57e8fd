package io.blackpipe.testing;

import io.blackpipe.upstream.LocalUpstreams;
import io.blackpipe.upstream.ManagedProcess;
import io.blackpipe.upstream.MongodReplicaSet;
import io.blackpipe.upstream.PathLookup;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * A standalone server (no replica set), for what a deployment without retryable writes changes.
 * Lanes, in order: a mongod on PATH started without --replSet; Docker, a mongo:7.0 container (or {@link MongoImage}'s)
 * without a replica set; otherwise a {@link ScriptedMongod} answering hello as a standalone (the
 * in-process double: jongodb runs as a replica set only). {@link #lane()} says which ran.
 */
public final class StandaloneUpstream implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final String lane;
    private final String uri;
    private final AutoCloseable server;
    private final Path tempDir;

    private StandaloneUpstream(String lane, String uri, AutoCloseable server, Path tempDir) {
        this.lane = lane;
        this.uri = uri;
        this.server = server;
        this.tempDir = tempDir;
        System.out.println("[blackpipe] standalone upstream lane: " + lane + " at " + uri);
    }

    public static StandaloneUpstream start() throws IOException {
        if (LocalUpstreams.mongodOnPath()) {
            return mongod(PathLookup.find("mongod").orElseThrow());
        }
        if (MongoContainerUpstream.dockerAvailable()) {
            return container();
        }
        ScriptedMongod scripted = ScriptedMongod.builder().standalone().start();
        return new StandaloneUpstream("scripted standalone (ScriptedMongod)", scripted.uri(), scripted, null);
    }

    private static StandaloneUpstream mongod(Path mongod) throws IOException {
        Path tempDir = Files.createTempDirectory("blackpipe-standalone-");
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        List<String> command = new java.util.ArrayList<>(List.of(mongod.toString(), "--bind_ip", "127.0.0.1", "--port", Integer.toString(port),
                "--dbpath", Files.createDirectories(tempDir.resolve("db")).toString(), "--wiredTigerCacheSizeGB", "0.25"));
        MongodReplicaSet.noUnixSocket(command); // as the replica set lane's members: a leftover socket file stops mongod
        ManagedProcess process = ManagedProcess.start("standalone mongod (port " + port + ")", command, tempDir.resolve("mongod.log"));
        try {
            // "Waiting for connections" in 4.4+'s JSON log, "waiting for connections on port" before it
            process.awaitLine(line -> line.toLowerCase(java.util.Locale.ROOT).contains("waiting for connections"), START_TIMEOUT);
        } catch (IOException | RuntimeException e) {
            process.close();
            deleteTree(tempDir);
            throw e;
        }
        return new StandaloneUpstream("mongod " + mongod, "mongodb://127.0.0.1:" + port + "/", process, tempDir);
    }

    private static StandaloneUpstream container() {
        String image = MongoImage.name();
        GenericContainer<?> container = new GenericContainer<>(MongoImage.image()).withExposedPorts(27017)
                .waitingFor(Wait.forLogMessage("(?i).*waiting for connections.*", 1)).withStartupTimeout(START_TIMEOUT);
        try {
            container.start();
        } catch (RuntimeException e) {
            container.stop();
            throw new IllegalStateException("could not start a standalone " + image + " container: "
                    + e.getMessage(), e);
        }
        return new StandaloneUpstream("testcontainers " + image,
                "mongodb://" + container.getHost() + ":" + container.getMappedPort(27017) + "/", container::stop, null);
    }

    /** A single-host mongodb:// URI; the driver finds a standalone there. */
    public String uri() {
        return uri;
    }

    public String lane() {
        return lane;
    }

    @Override
    public void close() throws Exception {
        try {
            server.close();
        } finally {
            if (tempDir != null) {
                deleteTree(tempDir);
            }
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
