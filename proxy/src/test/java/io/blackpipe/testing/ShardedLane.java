package io.blackpipe.testing;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.upstream.MongodShardedCluster;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The mongos routers of a sharded cluster, for the tests of one, in lanes as {@link UpstreamLane}'s:
 * BLACKPIPE_TEST_SHARDED_URI (a cluster's routers, two or more, used as they are), else a cluster of
 * the mongod and mongos on PATH ({@link MongodShardedCluster}), else two scripted mongos
 * ({@link ScriptedMongod#mongos}), each with a store of its own (no lane here can run a real cluster;
 * Testcontainers' sharded MongoDB container has one router only).
 */
public abstract class ShardedLane implements AutoCloseable {
    public static final String ENV = "BLACKPIPE_TEST_SHARDED_URI";

    /** Two routers or more, from the first lane that can give them; the lane is printed. */
    public static ShardedLane start() throws IOException {
        ShardedLane lane;
        String external = System.getenv(ENV);
        if (external != null && !external.isBlank()) {
            lane = new External(external);
        } else if (MongodShardedCluster.available()) {
            lane = new Real("mongod", MongodShardedCluster.start());
        } else {
            lane = new Scripted();
        }
        System.out.println("[blackpipe] sharded lane: " + lane.description());
        return lane;
    }

    /** "external", "mongod" or "scripted". */
    public abstract String name();

    public abstract String description();

    /** The routers' host:port, in the URI's order. */
    public abstract List<String> routers();

    /** How many documents the cluster holds in {@code db.collection}, read without the proxy. */
    public abstract long stored(String db, String collection);

    /** mongodb://router0,router1/: the first two routers, which the tests use. */
    public String uri() {
        return "mongodb://" + routers().get(0) + "," + routers().get(1) + "/";
    }

    @Override
    public abstract void close();

    /** A real cluster's routers: what it holds is read through one of them. */
    private static class Real extends ShardedLane {
        private final String name;
        private final MongodShardedCluster cluster;
        private final List<String> routers;
        private final MongoClient direct;

        Real(String name, MongodShardedCluster cluster, List<String> routers, String uri) {
            this.name = name;
            this.cluster = cluster;
            this.routers = List.copyOf(routers);
            this.direct = MongoClients.create(uri);
        }

        Real(String name, MongodShardedCluster cluster) {
            this(name, cluster, cluster.routerAddresses(), cluster.uri());
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String description() {
            return cluster != null ? cluster.description() : ENV + " (routers " + String.join(",", routers) + ")";
        }

        @Override
        public List<String> routers() {
            return routers;
        }

        @Override
        public long stored(String db, String collection) {
            return direct.getDatabase(db).getCollection(collection).countDocuments();
        }

        @Override
        public void close() {
            direct.close();
            if (cluster != null) {
                cluster.close();
            }
        }
    }

    private static final class External extends Real {
        External(String uri) {
            super("external", null, hosts(uri), uri);
        }

        private static List<String> hosts(String uri) {
            List<String> hosts = new ConnectionString(uri).getHosts();
            if (hosts.size() < 2) {
                throw new IllegalStateException(ENV + " must name two mongos routers or more; it names " + hosts);
            }
            return hosts;
        }
    }

    /** Two scripted mongos, each with a store of its own: what the cluster holds is what both hold. */
    private static final class Scripted extends ShardedLane {
        private final List<ScriptedMongod> routers = new ArrayList<>();

        Scripted() throws IOException {
            try {
                routers.add(ScriptedMongod.builder().mongos().start());
                routers.add(ScriptedMongod.builder().mongos().start());
            } catch (IOException | RuntimeException e) {
                close();
                throw e;
            }
        }

        @Override
        public String name() {
            return "scripted";
        }

        @Override
        public String description() {
            return "two scripted mongos (test doubles, each with a store of its own) at " + String.join(",", routers());
        }

        @Override
        public List<String> routers() {
            return routers.stream().map(ScriptedMongod::address).toList();
        }

        @Override
        public long stored(String db, String collection) {
            return routers.stream().mapToLong(r -> r.documents(db, collection).size()).sum();
        }

        @Override
        public void close() {
            routers.forEach(ScriptedMongod::close);
        }
    }
}
