package io.blackpipe.testing;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.upstream.JongodbUpstream;
import io.blackpipe.upstream.LocalUpstream;
import io.blackpipe.upstream.LocalUpstreams;
import io.blackpipe.upstream.MongodReplicaSet;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Assumptions;

/**
 * The one real MongoDB deployment the driver tests of this JVM talk to, started on first use and
 * stopped when the JVM exits. Lanes, in order of preference:
 * <ol>
 * <li>external: BLACKPIPE_TEST_URI names an existing deployment, used as is;</li>
 * <li>mongod: a mongod on PATH, run as a 3-member replica set;</li>
 * <li>testcontainers: Docker is available, a mongo:7.0 (or BLACKPIPE_TEST_MONGO_IMAGE) single-node replica set;</li>
 * <li>jongodb: the jongodb engine from npm (MongoDB-compatible, not MongoDB).</li>
 * </ol>
 * BLACKPIPE_TEST_LANE=mongod|testcontainers|jongodb forces one lane (and fails if it cannot run);
 * BLACKPIPE_TEST_URI, when set, wins over it.
 */
public final class UpstreamLane {
    private static final String RUN_ID = Integer.toString(ThreadLocalRandom.current().nextInt(36 * 36 * 36 * 36), 36);
    private static final AtomicInteger DATABASES = new AtomicInteger();

    private static Lane lane;
    private static RuntimeException failure;

    private record Lane(String name, String uri, String description, boolean jongodb, AutoCloseable upstream) {
    }

    private UpstreamLane() {
    }

    /** mongodb:// URI of the upstream (with replicaSet= where the lane allows it). */
    public static String uri() {
        return lane().uri();
    }

    /** "external", "mongod", "testcontainers" or "jongodb". */
    public static String name() {
        return lane().name();
    }

    public static String description() {
        return lane().description();
    }

    /** True on the jongodb lane, and for an external deployment that turns out to be jongodb. */
    public static boolean isJongodb() {
        return lane().jongodb();
    }

    /**
     * A new driver client straight to the upstream (no proxy), for checking what the server holds.
     * The caller closes it.
     */
    public static MongoClient directClient() {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri()))
                .applicationName("blackpipe-tests-direct")
                .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS))
                .build());
    }

    /**
     * A database name no other test (in this run or an earlier one against the same server) has
     * used. Tests take a fresh database instead of cleaning up, because jongodb cannot drop.
     */
    public static String freshDatabaseName(String prefix) {
        String safe = prefix.replaceAll("[^A-Za-z0-9_-]", "_");
        if (safe.length() > 24) {
            safe = safe.substring(0, 24);
        }
        return safe + "_" + RUN_ID + "_" + System.currentTimeMillis() % 1_000_000 + "_" + DATABASES.incrementAndGet();
    }

    private static synchronized Lane lane() {
        if (lane == null && failure == null) {
            try {
                lane = start();
                System.out.println("[blackpipe] upstream lane: " + lane.name() + " \u2014 " + lane.description());
                Runtime.getRuntime().addShutdownHook(new Thread(UpstreamLane::stop, "blackpipe-upstream-lane-stop"));
            } catch (Exception e) {
                failure = new IllegalStateException("no upstream for driver tests: " + e.getMessage(), e);
                System.out.println("[blackpipe] upstream lane: none \u2014 " + e.getMessage());
            }
        }
        if (failure != null) {
            throw failure;
        }
        return lane;
    }

    private static Lane start() throws Exception {
        String external = System.getenv("BLACKPIPE_TEST_URI");
        String forced = System.getenv("BLACKPIPE_TEST_LANE");
        if (external != null && !external.isBlank()) {
            return externalLane(external.strip());
        }
        String choice = forced == null || forced.isBlank() ? null : forced.strip().toLowerCase(Locale.ROOT);
        if (choice == null) {
            choice = LocalUpstreams.mongodOnPath() ? "mongod" : MongoContainerUpstream.dockerAvailable() ? "testcontainers" : "jongodb";
        }
        switch (choice) {
            case "mongod":
                return local("mongod", MongodReplicaSet.start(), false);
            case "testcontainers":
                if (!MongoContainerUpstream.dockerAvailable()) {
                    throw new IllegalStateException("BLACKPIPE_TEST_LANE=testcontainers but Testcontainers finds no Docker engine");
                }
                return local("testcontainers", MongoContainerUpstream.start(), false);
            case "jongodb":
                return local("jongodb", JongodbUpstream.start(), true);
            default:
                throw new IllegalArgumentException("BLACKPIPE_TEST_LANE=" + forced
                        + " is not a lane; use mongod, testcontainers or jongodb (or set BLACKPIPE_TEST_URI)");
        }
    }

    private static Lane local(String name, LocalUpstream upstream, boolean jongodb) {
        return new Lane(name, upstream.uri(), upstream.description(), jongodb, upstream);
    }

    /** An existing deployment: we only ask what it is, so capabilities (and the printed line) are honest. */
    private static Lane externalLane(String uri) {
        ConnectionString parsed = new ConnectionString(uri);
        String shown = parsed.getCredential() == null ? uri : uri.replaceFirst("://[^@/]*@", "://***@");
        BsonDocument buildInfo;
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder().applyConnectionString(parsed)
                .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS)).build())) {
            buildInfo = client.getDatabase("admin").runCommand(new Document("buildInfo", 1), BsonDocument.class);
        } catch (RuntimeException e) {
            throw new IllegalStateException("BLACKPIPE_TEST_URI=" + shown + " is not reachable: " + e.getMessage(), e);
        }
        String version = buildInfo.getString("version", new org.bson.BsonString("unknown")).getValue();
        boolean jongodb = version.contains("jongodb")
                || "jongodb".equals(buildInfo.getString("gitVersion", new org.bson.BsonString("")).getValue());
        return new Lane("external", uri, "BLACKPIPE_TEST_URI=" + shown + " (server version " + version + ")", jongodb, null);
    }

    private static synchronized void stop() {
        if (lane != null && lane.upstream() != null) {
            try {
                lane.upstream().close();
            } catch (Exception e) {
                System.err.println("[blackpipe] could not stop the upstream lane: " + e);
            }
        }
    }

    /** The replica set the lane's members report; skips (not passes) the calling test on a lane that is no replica set. */
    public static String setName() {
        BsonDocument hello = directHello();
        Assumptions.assumeTrue(hello.isString("setName"), () -> "the " + name() + " lane is no replica set: " + hello.toJson());
        return hello.getString("setName").getValue();
    }

    /** The lane's URI with its replicaSet option (added, or replacing the lane's own) naming {@code setName}. */
    public static String uriNaming(String setName) {
        String uri = uri().replaceAll("(?i)([?&])replicaSet=[^&]*(&|$)", "$1").replaceAll("[?&]$", "");
        String separator = uri.contains("?") ? "&" : uri.substring(uri.indexOf("://") + 3).contains("/") ? "?" : "/?";
        return uri + separator + "replicaSet=" + setName;
    }

    /**
     * One node of the lane, for what needs a single upstream node (--simulate-members presents a set over
     * one): the lane's own URI where it is one node (jongodb), else its primary dialled directly (the mongod
     * lane's 3-member set), with the lane's credentials and options but its replicaSet.
     */
    public static String singleNodeUri() {
        BsonDocument hello = directHello();
        String uri = uri();
        if (!hello.containsKey("hosts") || hello.getArray("hosts").size() <= 1 || !uri.startsWith("mongodb://")) {
            return uri; // one node already; an SRV lane is left as it is (blackpipe says what it needs)
        }
        return directlyTo(uri, hello.getString("primary").getValue());
    }

    /** {@code uri} with {@code host} for its seeds, directConnection=true for its replicaSet; user and options kept. */
    public static String directlyTo(String uri, String host) {
        String oneHost = uri.replaceFirst("^(mongodb://(?:[^@/]*@)?)[^/?]+", "$1" + java.util.regex.Matcher.quoteReplacement(host));
        String withoutSet = oneHost.replaceAll("(?i)([?&])replicaSet=[^&]*(&|$)", "$1").replaceAll("[?&]$", "");
        String separator = withoutSet.contains("?") ? "&" : withoutSet.substring(withoutSet.indexOf("://") + 3).contains("/") ? "?" : "/?";
        return withoutSet + separator + "directConnection=true";
    }

    /** Sends hello straight to the upstream; handy for tests that assert on the lane's topology. */
    public static BsonDocument directHello() {
        try (MongoClient client = directClient()) {
            return client.getDatabase("admin").runCommand(new BsonDocument("hello", new BsonInt32(1)), BsonDocument.class);
        }
    }
}
