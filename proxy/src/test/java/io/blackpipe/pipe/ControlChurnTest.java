package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.BlackPipe;
import io.blackpipe.fault.ScenarioRunner;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.NettyLeakCheck;
import io.blackpipe.testing.NettyWarnings;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberState;
import io.micrometer.core.instrument.Counter;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The control plane changing while traffic flows. Many driver threads (retryable inserts and finds; half
 * of the clients with a socket timeout, half without) run through one proxy in front of a
 * {@link ScriptedMongod}, while a control thread ({@link ChurnControl}) adds,
 * replaces and removes rules of every action, starts and stops scenarios, takes members out (outage,
 * blackhole, timed or until restored) and back, resets connections, fails over, resets the proxy and
 * reads its stats, history and rules, through the Java API and the admin API. After the churn (restore,
 * reset), whatever the interleaving:
 * <ul>
 * <li>no reply was misrouted (a document found is the one asked for) and no thread got anything but a
 *     MongoException;</li>
 * <li>the blackpipe log has no unexpected error or failed fault end, Netty logged no warning, and no
 *     buffer leaked (the leak detector runs at paranoid);</li>
 * <li>once the clients close, every proxied connection and every upstream connection closes;</li>
 * <li>each command's attempts equal the sum of its outcomes (every attempt ends exactly once) and the
 *     history has one line per attempt;</li>
 * <li>no fault is left behind: no rule, scenario, blackhole or outage, the simulated set's first member
 *     is primary in the proxy's own view, and a fresh client's insert and find work at once;</li>
 * <li>every event loop runs a task at once.</li>
 * </ul>
 * Default: 40 threads for ~10 s in each of two deployments (a simulated 3-member set; the scripted node as a
 * single-member set). {@code -Dblackpipe.churn.minutes=M} runs M minutes,
 * {@code -Dblackpipe.churn.threads=N} N threads; the seed is printed ({@code -Dblackpipe.churn.seed=S}).
 */
class ControlChurnTest {
    private static final String PATIENT = "churn-patient";

    /**
     * @param members 3: a simulated set (failovers, secondaries); 1: the scripted node as the single-member set it
     *                is (streamed hellos and their early answers after an injected state-change error, an app's own
     *                configureFailPoint and waitForFailPoint)
     */
    @ParameterizedTest(name = "{0} member(s)")
    @ValueSource(ints = {3, 1})
    void controlChangesRacingTrafficLeaveNothingBehind(int members) throws Exception {
        long seed = Long.getLong("blackpipe.churn.seed", System.nanoTime());
        double minutes = Double.parseDouble(System.getProperty("blackpipe.churn.minutes", "0"));
        long millis = minutes > 0 ? (long) (minutes * 60_000) : 10_000;
        int threads = Integer.getInteger("blackpipe.churn.threads", 40);
        System.out.println("ControlChurnTest seed=" + seed + ", " + members + " member(s), " + threads + " threads for " + millis
                + " ms (rerun with -Dblackpipe.churn.seed=" + seed + ")");
        try (LogCapture log = LogCapture.start();
             NettyWarnings netty = NettyWarnings.capture();
             ScriptedMongod upstream = ScriptedMongod.start();
             BlackPipe blackPipe = (members > 1 ? BlackPipe.builder().upstream(upstream.uri()).simulateMembers(members)
                     : BlackPipe.builder().upstream(upstream.uri("replicaSet=" + ScriptedMongod.SET_NAME))).seed(seed).adminPort(0).start()) {
            ProxyServer proxy = blackPipe.server();
            Map<String, AtomicLong> historyLines = new ConcurrentHashMap<>();
            AutoCloseable following = proxy.history().follow(
                    entry -> historyLines.computeIfAbsent(entry.command(), k -> new AtomicLong()).incrementAndGet());

            List<MongoClient> clients = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                boolean impatient = c % 2 == 0;
                clients.add(client(proxy, impatient ? ChurnControl.IMPATIENT : PATIENT, Math.max(1, threads / 4), impatient ? 1_500 : 0, 5_000));
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<Throwable> wrong = new AtomicReference<>();
            Map<String, AtomicLong> results = new ConcurrentHashMap<>();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                workers.add(worker(t, clients.get(t % clients.size()).getDatabase("churn").getCollection("c"), new Random(seed + t),
                        stop, wrong, results));
            }
            workers.forEach(Thread::start);
            Thread trimmer = daemon("churn-trim", () -> {
                while (!stop.get()) {
                    upstream.clearRecords(); // the scripted upstream records every frame; keep that short
                    sleep(500);
                }
            });
            AtomicLong slowestLoopMillis = new AtomicLong();
            Thread loopWatch = daemon("churn-loop-watch", () -> {
                while (!stop.get()) {
                    slowestLoopMillis.accumulateAndGet(slowestEventLoopMillis(proxy), Math::max);
                    sleep(50);
                }
            });

            MongoClient app = client(proxy, "churn-control", 2, 2_000, 500); // the control thread must not wait long
            clients.add(app);
            ChurnControl control = new ChurnControl(blackPipe, seed, app);
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            Random pauses = new Random(seed);
            try {
                while (System.nanoTime() < end && wrong.get() == null) {
                    control.step();
                    Thread.sleep(pauses.nextInt(30));
                }
            } finally {
                blackPipe.restore("all");
                blackPipe.reset();
                stop.set(true);
                for (Thread worker : workers) {
                    worker.join(60_000);
                    assertFalse(worker.isAlive(), worker.getName() + " is still waiting after the churn ended");
                }
                trimmer.join();
                loopWatch.join();
            }
            System.out.println("ControlChurnTest control operations: " + new TreeMap<>(control.done));
            System.out.println("ControlChurnTest driver results: " + new TreeMap<>(results)
                    + "; slowest event loop task " + slowestLoopMillis.get() + " ms");
            if (wrong.get() != null) {
                throw new AssertionError("seed " + seed + ": a worker saw what no fault explains", wrong.get());
            }
            long succeeded = results.getOrDefault("insert ok", new AtomicLong()).get() + results.getOrDefault("find ok", new AtomicLong()).get();
            assertTrue(succeeded > 0, "no operation succeeded");

            // Nothing is left behind: no fault in force, and the proxy's view of the roles is the simulation's.
            assertEquals(List.of(), blackPipe.rules(), "rules after reset");
            assertTrue(proxy.scenarios().state() != ScenarioRunner.State.RUNNING, "a scenario still runs after reset");
            Member first = proxy.members().get(0);
            for (Member member : proxy.members()) {
                MemberListener listener = proxy.listener(member.upstream());
                assertFalse(listener.blackholed() || listener.down(), member.upstream() + " is still faulted after restore");
                MemberState.Role expected = member.upstream().equals(first.upstream()) ? MemberState.Role.PRIMARY : MemberState.Role.SECONDARY;
                assertEquals(expected, proxy.memberState(member.upstream()).role(), "seed " + seed + ": the proxy's role of "
                        + member.upstream() + " after reset (it selects 'primary' by it)");
            }

            clients.forEach(MongoClient::close);
            freshClientWorksAtOnce(proxy);
            for (Member member : proxy.members()) {
                Await.closedOnceTheDriversLeaksAreCollected(() -> "seed " + seed + ": the connections of " + member.upstream()
                        + " to close (open: " + proxy.openConnections(member.upstream()) + ")", () -> proxy.openConnections(member.upstream()) == 0);
            }
            Await.closedOnceTheDriversLeaksAreCollected(() -> "seed " + seed + ": the proxy's upstream connections to close (open: "
                    + upstream.openConnections() + ")", () -> upstream.openConnections() == 0);

            // Every attempt ended exactly once, and left one history line.
            Await.until(Duration.ofSeconds(10), () -> "seed " + seed + ": attempts to equal outcomes: " + attemptsAndOutcomes(proxy),
                    () -> attemptsAndOutcomes(proxy).values().stream().allMatch(counts -> counts[0] == counts[1]));
            Map<String, long[]> counts = attemptsAndOutcomes(proxy);
            Await.until(Duration.ofSeconds(10), "the history to catch up", () -> historyLines.values().stream().mapToLong(AtomicLong::get).sum()
                    >= counts.values().stream().mapToLong(c -> c[0]).sum());
            following.close();
            for (Map.Entry<String, long[]> command : counts.entrySet()) {
                assertEquals(command.getValue()[0], historyLines.getOrDefault(command.getKey(), new AtomicLong()).get(),
                        "seed " + seed + ": history lines of " + command.getKey());
            }
            System.out.println("ControlChurnTest attempts, outcomes: " + counts.entrySet().stream()
                    .map(e -> e.getKey() + "=" + e.getValue()[0]).toList());

            assertTrue(slowestEventLoopMillis(proxy) < 2_000, "an event loop is blocked");
            List<String> unexpected = log.messages().stream().filter(m -> m.contains("unexpected error") || m.contains("could not end"))
                    .toList();
            assertEquals(List.of(), unexpected, "seed " + seed + ": the blackpipe log");
            assertEquals(List.of(), netty.said(), "seed " + seed + ": Netty's log");
            assertEquals(List.of(), upstream.errors().stream().map(Throwable::toString).toList(), "the scripted upstream's errors");
        }
        List<String> leaks = NettyLeakCheck.detectLeaks();
        assertEquals(List.of(), leaks, "seed " + seed + ": Netty leaks");
    }

    private static Thread worker(int thread, MongoCollection<Document> collection, Random random, AtomicBoolean stop,
                                 AtomicReference<Throwable> wrong, Map<String, AtomicLong> results) {
        return new Thread(() -> {
            List<Long> written = new ArrayList<>();
            long next = 0;
            while (!stop.get() && wrong.get() == null) {
                boolean insert = written.isEmpty() || random.nextInt(3) > 0;
                long id = insert ? thread * 1_000_000_000L + next++ : written.get(random.nextInt(written.size()));
                String operation = insert ? "insert" : "find";
                try {
                    if (insert) {
                        collection.insertOne(new Document("_id", id).append("payload", payload(id)));
                        written.add(id);
                    } else {
                        // A canned reply may answer a find with no document, or an insert that never ran: none is
                        // fine, another document than the one asked for never is.
                        Document back = collection.find(new Document("_id", id)).first();
                        if (back != null && (back.getLong("_id") != id || !payload(id).equals(back.getString("payload")))) {
                            wrong.compareAndSet(null, new AssertionError("thread " + thread + " asked for _id " + id + " and got " + back));
                        }
                    }
                    results.computeIfAbsent(operation + " ok", k -> new AtomicLong()).incrementAndGet();
                } catch (MongoException e) {
                    results.computeIfAbsent(operation + " " + e.getClass().getSimpleName(), k -> new AtomicLong()).incrementAndGet();
                } catch (Throwable e) {
                    wrong.compareAndSet(null, e);
                }
            }
        }, "churn-" + thread);
    }

    private static MongoClient client(ProxyServer proxy, String app, int poolSize, int readTimeoutMillis, int serverSelectionMillis) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(proxy.connectionString()))
                .applicationName(app)
                .retryWrites(true)
                .retryReads(true)
                .applyToClusterSettings(b -> b.serverSelectionTimeout(serverSelectionMillis, TimeUnit.MILLISECONDS))
                .applyToServerSettings(b -> b.heartbeatFrequency(500, TimeUnit.MILLISECONDS))
                .applyToSocketSettings(b -> b.connectTimeout(2, TimeUnit.SECONDS)
                        .readTimeout(readTimeoutMillis, TimeUnit.MILLISECONDS))
                .applyToConnectionPoolSettings(b -> b.maxSize(poolSize).maxWaitTime(30, TimeUnit.SECONDS))
                .build());
    }

    /** Once every fault is gone, a new client's first insert and find take no longer than a server selection. */
    private static void freshClientWorksAtOnce(ProxyServer proxy) {
        long started = System.nanoTime();
        try (MongoClient fresh = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(proxy.connectionString()))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(5, TimeUnit.SECONDS))
                .applyToSocketSettings(b -> b.readTimeout(5, TimeUnit.SECONDS))
                .build())) {
            MongoCollection<Document> collection = fresh.getDatabase("churn").getCollection("fresh");
            collection.insertOne(new Document("_id", "after"));
            assertEquals(new Document("_id", "after"), collection.find(new Document("_id", "after")).first());
        }
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertTrue(took < 5_000, "a fresh client's insert and find took " + took + " ms");
    }

    /** Per command: {attempts, sum of outcomes}. */
    private static Map<String, long[]> attemptsAndOutcomes(ProxyServer proxy) {
        Map<String, long[]> counts = new TreeMap<>();
        for (Counter counter : proxy.registry().find("blackpipe.command.attempts").counters()) {
            counts.computeIfAbsent(counter.getId().getTag("command"), k -> new long[2])[0] += (long) counter.count();
        }
        for (Counter counter : proxy.registry().find("blackpipe.command.outcomes").counters()) {
            counts.computeIfAbsent(counter.getId().getTag("command"), k -> new long[2])[1] += (long) counter.count();
        }
        return counts;
    }

    /** How long the slowest of the proxy's event loops took to run a task submitted to it now. */
    private static long slowestEventLoopMillis(ProxyServer proxy) {
        Set<EventLoop> loops = new HashSet<>();
        for (Member member : proxy.members()) {
            loops.addAll(proxy.listener(member.upstream()).connections().eventLoops());
        }
        long slowest = 0;
        for (EventLoop loop : loops) {
            long started = System.nanoTime();
            if (!loop.submit(() -> { }).awaitUninterruptibly(10, TimeUnit.SECONDS)) {
                return TimeUnit.SECONDS.toMillis(10);
            }
            slowest = Math.max(slowest, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        }
        return slowest;
    }

    private static Thread daemon(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static String payload(long id) {
        return "p" + Long.toHexString(id * 0x9E3779B97F4A7C15L);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
