package io.blackpipe.bench;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.UpstreamUri;
import io.blackpipe.upstream.JongodbUpstream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;

/**
 * The deployment every target ends at: the in-process wire responder (the default, fast enough
 * that the proxy's cost shows), jongodb (a real engine, slower), or any mongodb:// or mongodb+srv:// URI.
 */
final class BenchUpstream implements AutoCloseable {
    final String kind;
    final String description;
    /** What blackpipe proxies (replica set discovery, hellos rewritten). */
    final String proxiedUri;
    /** The one node the direct and HAProxy targets dial (the primary), with directConnection=true. */
    final MemberAddress node;
    final String database;
    final int userDocs;
    final int bigDocs;
    private final AutoCloseable owned;

    private BenchUpstream(String kind, String description, String proxiedUri, MemberAddress node, String database,
                          int userDocs, int bigDocs, AutoCloseable owned) {
        this.kind = kind;
        this.description = description;
        this.proxiedUri = proxiedUri;
        this.node = node;
        this.database = database;
        this.userDocs = userDocs;
        this.bigDocs = bigDocs;
        this.owned = owned;
    }

    static BenchUpstream fast(int threads, int userDocs, int bigDocs) {
        WireResponder responder = WireResponder.start("127.0.0.1", 0, threads, userDocs, bigDocs);
        return new BenchUpstream("fast", responder.description() + ", " + threads + " event loop thread(s)",
                responder.uri(), new MemberAddress("127.0.0.1", responder.port()), "bench", userDocs, bigDocs, responder);
    }

    static BenchUpstream jongodb(int userDocs, int bigDocs) throws IOException {
        JongodbUpstream jongodb = JongodbUpstream.start();
        try {
            return external("jongodb", jongodb.description(), jongodb.uri(), userDocs, bigDocs, jongodb);
        } catch (RuntimeException e) {
            jongodb.close();
            throw e;
        }
    }

    static BenchUpstream uri(String uri, int userDocs, int bigDocs) {
        return external("uri", "the deployment at " + uri, uri, userDocs, bigDocs, null);
    }

    /** Finds the primary and loads the data sets into database blackpipe_bench (users, big; events emptied). */
    private static BenchUpstream external(String kind, String description, String uri, int userDocs, int bigDocs,
                                          AutoCloseable owned) {
        UpstreamUri parsed = UpstreamUri.parse(uri);
        MemberAddress node = parsed.seeds().get(0);
        String database = "blackpipe_bench";
        try (MongoClient client = MongoClients.create(uri)) {
            Document hello = client.getDatabase("admin").runCommand(new Document("hello", 1));
            if (hello.getString("primary") != null) {
                node = MemberAddress.parse(hello.getString("primary"));
            }
            MongoDatabase db = client.getDatabase(database);
            MongoCollection<Document> users = db.getCollection(Workloads.USERS);
            users.deleteMany(new Document());
            insertInBatches(users, userDocs, i -> new Document("_id", i).append("name", "user-" + i)
                    .append("email", "user-" + i + "@example.com").append("score", i * 7).append("active", true));
            MongoCollection<Document> big = db.getCollection(WireResponder.BIG);
            if (big.countDocuments() != bigDocs) {
                big.deleteMany(new Document());
                insertInBatches(big, bigDocs, i -> new Document("_id", i).append("v", "value-" + i).append("n", i));
            }
            db.getCollection(Workloads.EVENTS).deleteMany(new Document());
        }
        return new BenchUpstream(kind, description, uri, node, database, userDocs, bigDocs, owned);
    }

    private interface DocumentMaker {
        Document make(int i);
    }

    private static void insertInBatches(MongoCollection<Document> collection, int count, DocumentMaker maker) {
        List<Document> batch = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            batch.add(maker.make(i));
            if (batch.size() == 1000 || i == count - 1) {
                collection.insertMany(batch);
                batch = new ArrayList<>();
            }
        }
    }

    /**
     * The direct target: the primary itself, no discovery. Except on jongodb, which refuses the
     * primaryPreferred read preference drivers send with directConnection=true; its replica set
     * has the one member, so discovery lands on the same node.
     */
    String directUri() {
        return kind.equals("jongodb") ? proxiedUri : "mongodb://" + node + "/?directConnection=true";
    }

    /** Why a plain TCP proxy cannot be measured in front of this upstream, or null. */
    String whyNoTcpProxy() {
        return kind.equals("jongodb") ? "jongodb refuses the primaryPreferred read preference drivers send with "
                + "directConnection=true, and replica set discovery would lead the driver past HAProxy to jongodb itself" : null;
    }

    @Override
    public void close() {
        if (!kind.equals("fast")) {
            try (MongoClient client = MongoClients.create(directUri())) {
                client.getDatabase(database).getCollection(Workloads.EVENTS).deleteMany(new Document()); // what the insert workload left
            } catch (RuntimeException ignored) {
                // best effort
            }
        }
        if (owned != null) {
            try {
                owned.close();
            } catch (Exception ignored) {
                // closing anyway
            }
        }
    }
}
