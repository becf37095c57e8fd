package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.topology.MemberAddress;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Many concurrent driver connections doing retryable inserts and finds through one proxy with random
 * faults (resetConnection, closeConnection, errorCode 10107/91/13, dropReply, delayReplyMS; each
 * with activationProbability 0.05, from a seed) in front of a {@link ScriptedMongod}. Afterwards:
 * <ul>
 * <li>the proxy's attempts and retries of insert and find equal what the drivers' command monitoring
 *     saw (a started event is a retry when an earlier attempt of the same operation failed); a thread
 *     never re-reads an _id whose find failed, since that read is wire-identical to a retry;</li>
 * <li>no reply was lost or misrouted: every thread writes its own _ids and every successful find
 *     returns exactly the document of the _id it asked for (and one whose insert succeeded is found);</li>
 * <li>after every client closed: the proxy has no open connection, open file descriptors
 *     (/proc/self/fd) and the heap after GC are back near the baseline.</li>
 * </ul>
 * Default: 100 threads, ten per client (pool size 10 each), for ~15 s. {@code -Dblackpipe.load.minutes=M}
 * runs 500 threads/connections (50 clients of 10) for M minutes; {@code -Dblackpipe.load.threads=N}
 * overrides the thread count. The seed is printed (-Dblackpipe.load.seed=N).
 */
class LoadTest {
    private static final int[] ERROR_CODES = {10107, 91, 13};

    @Test
    void concurrentDriversWithRandomFaultsAgreeWithTheProxy() throws Exception {
        long seed = Long.getLong("blackpipe.load.seed", System.nanoTime());
        double minutes = Double.parseDouble(System.getProperty("blackpipe.load.minutes", "0"));
        long millis = minutes > 0 ? (long) (minutes * 60_000) : 15_000;
        String probability = System.getProperty("blackpipe.load.probability", "0.05");
        int threads = Integer.getInteger("blackpipe.load.threads", minutes > 0 ? 500 : 100);
        System.out.println("LoadTest seed=" + seed + ", " + threads + " threads for " + millis + " ms (rerun with -Dblackpipe.load.seed=" + seed + ")");

        try (ScriptedMongod upstream = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(upstream.uri()).withFaultOptions(seed, false))) {
            MemberAddress member = proxy.members().get(0).upstream();
            // Warm up once (classes, pools, the proxy's first connections), then take the baseline.
            try (MongoClient warm = client(proxy, 4, null)) {
                warm.getDatabase("load").getCollection("c").insertOne(new Document("_id", "warm"));
                warm.getDatabase("load").getCollection("c").find(new Document("_id", "warm")).first();
            }
            Await.until(Duration.ofSeconds(10), "the warm-up connections to close", () -> proxy.openConnections(member) == 0);
            long insertsBefore = Meters.attempts(proxy.registry(), "insert");
            long findsBefore = Meters.attempts(proxy.registry(), "find");
            long fdBaseline = openFileDescriptors();
            long heapBaseline = heapAfterGc();

            for (String fault : List.of("resetConnection: true", "closeConnection: true", "dropReply: true",
                    "delayReplyMS: 20", "errorCode: " + ERROR_CODES[0], "errorCode: " + ERROR_CODES[1], "errorCode: " + ERROR_CODES[2])) {
                proxy.rules().put(proxy.ruleParser().parse("load-" + fault.replaceAll("[^A-Za-z0-9]", ""), BsonDocument.parse(
                        "{configureFailPoint: 'failCommand', mode: {activationProbability: " + probability + "}, data: {failCommands: ['insert', 'find'], "
                                + fault + "}}")));
            }

            Events events = new Events();
            // Ten threads per client: a network fault clears a client's whole pool (the driver's rule),
            // so one pool of 100 would spend the run re-opening connections.
            int clientCount = Math.max(1, threads / 10);
            List<MongoClient> clients = new ArrayList<>();
            for (int c = 0; c < clientCount; c++) {
                clients.add(client(proxy, (threads + clientCount - 1) / clientCount, events));
            }
            AtomicLong inserts = new AtomicLong();
            AtomicLong finds = new AtomicLong();
            AtomicLong failures = new AtomicLong();
            AtomicReference<Throwable> wrong = new AtomicReference<>();
            Map<String, Integer> failureKinds = new ConcurrentHashMap<>();
            List<Thread> workers = new ArrayList<>();
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            for (int t = 0; t < threads; t++) {
                int thread = t;
                MongoCollection<Document> collection = clients.get(t % clientCount).getDatabase("load").getCollection("c");
                Random random = new Random(seed + t);
                Thread worker = new Thread(() -> {
                    List<Long> written = new ArrayList<>();
                    long next = 0;
                    while (System.nanoTime() < end && wrong.get() == null) {
                        boolean insert = written.isEmpty() || random.nextInt(3) > 0;
                        long id = insert ? thread * 1_000_000_000L + next++ : written.get(random.nextInt(written.size()));
                        try {
                            if (insert) {
                                collection.insertOne(new Document("_id", id).append("owner", thread).append("payload", payload(id)));
                                inserts.incrementAndGet();
                                written.add(id);
                            } else {
                                Document back = collection.find(new Document("_id", id)).first();
                                finds.incrementAndGet();
                                if (back == null || back.getLong("_id") != id || !payload(id).equals(back.getString("payload"))) {
                                    wrong.compareAndSet(null, new AssertionError("thread " + thread + " asked for _id " + id
                                            + " (acknowledged insert) and got " + back));
                                }
                            }
                        } catch (MongoException e) {
                            failures.incrementAndGet(); // a fault that outlived the driver's one retry
                            failureKinds.merge(e.getClass().getSimpleName() + "/" + e.getCode(), 1, Integer::sum);
                            if (!insert) {
                                // Never repeat a failed read: on the wire an identical find on the same pooled
                                // session right after a failure IS a retry to the proxy (RetryTracker's documented
                                // rule), while the driver calls it a new operation.
                                written.remove(id);
                            }
                        } catch (Throwable e) {
                            wrong.compareAndSet(null, e);
                        }
                    }
                }, "load-" + t);
                workers.add(worker);
                worker.start();
            }
            // The scripted upstream records every frame in a copy-on-write list; keep it short.
            Thread trimmer = new Thread(() -> {
                while (System.nanoTime() < end) {
                    upstream.clearRecords();
                    sleep(500);
                }
            }, "load-trim");
            trimmer.setDaemon(true);
            trimmer.start();
            for (Thread worker : workers) {
                worker.join(millis + 120_000);
                assertTrue(!worker.isAlive(), worker.getName() + " did not finish");
            }
            if (wrong.get() != null) {
                throw new AssertionError("seed " + seed + ": a reply was lost or misrouted", wrong.get());
            }
            System.out.printf("LoadTest: %d inserts, %d finds, %d operations failed by faults %s; proxy attempts insert=%d find=%d%n",
                    inserts.get(), finds.get(), failures.get(), failureKinds, Meters.attempts(proxy.registry(), "insert"),
                    Meters.attempts(proxy.registry(), "find"));
            // Throughput depends on the machine; what must hold is that work got done and the driver's
            // one retry absorbed most single faults.
            assertTrue(inserts.get() > 0 && finds.get() > 0, "no work was done");
            assertTrue(inserts.get() + finds.get() > failures.get(), "most operations should succeed: "
                    + (inserts.get() + finds.get()) + " did, " + failures.get() + " failed");

            clients.forEach(MongoClient::close);
            Await.closedOnceTheDriversLeaksAreCollected(() -> "every proxied connection to close (open: " + proxy.openConnections(member) + ")",
                    () -> proxy.openConnections(member) == 0); // its faults' network errors cancel monitor checks too
            for (String command : List.of("insert", "find")) {
                String context = "seed " + seed + ", " + command;
                long before = command.equals("insert") ? insertsBefore : findsBefore; // the warm-up's
                Await.until(Duration.ofSeconds(10), () -> context + ": proxy attempts " + Meters.attempts(proxy.registry(), command)
                        + " to reach the driver's " + events.started(command), () -> Meters.attempts(proxy.registry(), command) - before >= events.started(command));
                assertEquals(events.started(command), Meters.attempts(proxy.registry(), command) - before, context + ": attempts");
                long timeouts = events.readTimeouts(command);
                if (timeouts == 0) {
                    assertEquals(events.retries(command), Meters.retries(proxy.registry(), command), context + ": retries");
                } else {
                    // A reply the proxy delivered but the driver gave up on (socketTimeoutMS on an overloaded
                    // machine) ended well for the proxy and badly for the driver: the next identical attempt
                    // is a retry to one and not the other. Each such timeout may move the count by one.
                    long difference = Math.abs(events.retries(command) - Meters.retries(proxy.registry(), command));
                    assertTrue(difference <= timeouts, context + ": retries differ by " + difference + " (driver "
                            + events.retries(command) + ", proxy " + Meters.retries(proxy.registry(), command)
                            + "), more than the " + timeouts + " read timeouts the driver saw");
                }
            }
            assertTrue(events.retries("insert") > 0, "the faults should have caused retries");

            // What the test's own upstream keeps (the documents, every frame) is not the proxy's.
            try (MongoClient direct = MongoClients.create(upstream.uri())) {
                direct.getDatabase("load").getCollection("c").drop();
            }
            upstream.clearRecords();
            Await.until(Duration.ofSeconds(20), () -> "open file descriptors back near " + fdBaseline + " (are "
                    + openFileDescriptors() + ")", () -> openFileDescriptors() <= fdBaseline + 16);
            long heap = heapAfterGc();
            System.out.printf("LoadTest: fds %d -> %d, heap after GC %d MB -> %d MB%n", fdBaseline, openFileDescriptors(),
                    heapBaseline >> 20, heap >> 20);
            assertTrue(heap <= heapBaseline + (96L << 20), "heap after GC grew from " + (heapBaseline >> 20) + " MB to " + (heap >> 20) + " MB");
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String payload(long id) {
        return "p" + Long.toHexString(id * 0x9E3779B97F4A7C15L);
    }

    private static MongoClient client(ProxyServer proxy, int poolSize, Events events) {
        MongoClientSettings.Builder settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(proxy.connectionString()))
                .retryWrites(true)
                .retryReads(true)
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
                .applyToSocketSettings(b -> b.readTimeout(4, TimeUnit.SECONDS).connectTimeout(5, TimeUnit.SECONDS))
                .applyToConnectionPoolSettings(b -> b.maxSize(poolSize).maxWaitTime(60, TimeUnit.SECONDS));
        if (events != null) {
            settings.addCommandListener(events);
        }
        return MongoClients.create(settings.build());
    }

    /** The drivers' command monitoring: started events by command, and which attempts failed. */
    static final class Events implements CommandListener {
        record Started(String name, long operationId, int requestId) {
        }

        private final java.util.Queue<Started> started = new java.util.concurrent.ConcurrentLinkedQueue<>();
        private final Set<Integer> failed = ConcurrentHashMap.newKeySet();
        private final Map<String, AtomicLong> readTimeouts = new ConcurrentHashMap<>();

        @Override
        public void commandStarted(CommandStartedEvent event) {
            started.add(new Started(event.getCommandName(), event.getOperationId(), event.getRequestId()));
        }

        @Override
        public void commandFailed(CommandFailedEvent event) {
            failed.add(event.getRequestId());
            if (event.getThrowable() instanceof com.mongodb.MongoSocketReadTimeoutException) {
                readTimeouts.computeIfAbsent(event.getCommandName(), k -> new AtomicLong()).incrementAndGet();
            }
        }

        long readTimeouts(String command) {
            AtomicLong n = readTimeouts.get(command);
            return n == null ? 0 : n.get();
        }

        long started(String command) {
            return started.stream().filter(e -> e.name().equals(command)).count();
        }

        /** Started events of {@code command} after a failed attempt of the same operation. */
        long retries(String command) {
            Map<Long, Boolean> earlierFailed = new ConcurrentHashMap<>();
            long retries = 0;
            for (Started e : started) {
                if (!e.name().equals(command)) {
                    continue;
                }
                if (earlierFailed.getOrDefault(e.operationId(), false)) {
                    retries++;
                }
                if (failed.contains(e.requestId())) {
                    earlierFailed.put(e.operationId(), true);
                }
            }
            return retries;
        }
    }

    static long openFileDescriptors() {
        String[] fds = new File("/proc/self/fd").list();
        return fds == null ? -1 : fds.length;
    }

    static long heapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
