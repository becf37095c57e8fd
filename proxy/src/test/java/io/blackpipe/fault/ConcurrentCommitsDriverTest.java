package io.blackpipe.fault;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Updates;
import io.blackpipe.BlackPipe;
import io.blackpipe.testing.UpstreamLane;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Transactions committed at once, beside plain writes, through the proxy, on every lane: every write the
 * driver saw succeed is stored, as on mongod. jongodb 0.1.6 alone loses some (its commit puts back a copy
 * of each collection it wrote, taken before the writes that landed meanwhile): seen here, without the proxy's
 * make-up, as 5 to 25 of the 120 increments lost. Through the proxy its commits go alone (CommitsAlone).
 */
class ConcurrentCommitsDriverTest extends DriverRigTest {
    private static final int TRANSACTION_THREADS = 4;
    private static final int PLAIN_THREADS = 2;
    private static final int PER_THREAD = 20;

    @Test
    void transactionsCommittedAtOnceBesidePlainWritesLoseNothing() throws Exception {
        MongoClient client = rig.client("retryWrites=true");
        writeAtOnceAndCheck(client, client);
    }

    /**
     * JUnit classes run in parallel each have a proxy of their own in front of the same upstream: a commit through one
     * went alone at that proxy only, and jongodb lost plain increments through the other.
     */
    @Test
    void transactionsThroughOneProxyBesidePlainWritesThroughAnotherLoseNothing() throws Exception {
        try (BlackPipe another = BlackPipe.start(UpstreamLane.uri());
             MongoClient plain = MongoClients.create(another.connectionString() + "&retryWrites=true")) {
            writeAtOnceAndCheck(rig.client("retryWrites=true"), plain);
        }
    }

    /** The same with the node written another way: localhost:P and 127.0.0.1:P had a gate each. */
    @Test
    void transactionsThroughAProxyDiallingTheNodeByAnotherNameLoseNothing() throws Exception {
        String byName = UpstreamLane.singleNodeUri().replace("127.0.0.1", "localhost");
        String direct = byName + (byName.contains("?") ? "&" : byName.substring(byName.indexOf("://") + 3).contains("/") ? "?" : "/?")
                + "directConnection=true"; // dialled as written
        try (BlackPipe byAnotherName = BlackPipe.start(direct.replaceAll("(?i)([?&])replicaSet=[^&]*&?", "$1"));
             MongoClient transactions = MongoClients.create(byAnotherName.connectionString() + "&retryWrites=true");
             MongoClient plain = rig.client("retryWrites=true")) {
            writeAtOnceAndCheck(transactions, plain);
        }
    }

    /** The same beside a proxy that simulates a set over the node: its members' names are its own, the node is not. */
    @Test
    void transactionsThroughASimulatedSetBesidePlainWritesThroughAnotherProxyLoseNothing() throws Exception {
        try (BlackPipe simulated = BlackPipe.builder().upstream(UpstreamLane.singleNodeUri()).simulateMembers(3).start();
             MongoClient transactions = MongoClients.create(simulated.connectionString() + "&retryWrites=true");
             MongoClient plain = rig.client("retryWrites=true")) {
            writeAtOnceAndCheck(transactions, plain);
        }
    }

    private void writeAtOnceAndCheck(MongoClient client, MongoClient plainClient) throws Exception {
        int documents = (TRANSACTION_THREADS + PLAIN_THREADS) * PER_THREAD;
        rig.serverSide("counters").insertMany(IntStream.range(0, documents)
                .mapToObj(i -> new Document("_id", i).append("n", 0)).toList());
        MongoCollection<Document> counters = client.getDatabase(rig.db).getCollection("counters");
        MongoCollection<Document> plainCounters = plainClient.getDatabase(rig.db).getCollection("counters");
        MongoCollection<Document> log = client.getDatabase(rig.db).getCollection("log");
        ExecutorService pool = Executors.newFixedThreadPool(TRANSACTION_THREADS + PLAIN_THREADS);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < TRANSACTION_THREADS + PLAIN_THREADS; t++) {
                int first = t * PER_THREAD;
                boolean inTransactions = t < TRANSACTION_THREADS;
                work.add(pool.submit(() -> {
                    for (int id = first; id < first + PER_THREAD; id++) {
                        int counter = id;
                        if (!inTransactions) {
                            plainCounters.updateOne(eq("_id", counter), Updates.inc("n", 1));
                            continue;
                        }
                        try (ClientSession session = client.startSession()) {
                            session.withTransaction(() -> {
                                counters.updateOne(session, eq("_id", counter), Updates.inc("n", 1));
                                log.insertOne(session, new Document("_id", counter));
                                return null;
                            });
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : work) {
                f.get(); // every write succeeded, as the driver saw it
            }
        } finally {
            pool.shutdownNow();
        }
        List<Object> notOnce = new ArrayList<>();
        rig.serverSide("counters").find().forEach(d -> {
            if (d.getInteger("n") != 1) {
                notOnce.add(d.get("_id") + ": " + d.getInteger("n"));
            }
        });
        assertEquals(List.of(), notOnce, "increments not stored once, on " + UpstreamLane.name());
        assertEquals(TRANSACTION_THREADS * PER_THREAD, rig.serverSide("log").countDocuments(), "every transaction's insert");
    }
}
