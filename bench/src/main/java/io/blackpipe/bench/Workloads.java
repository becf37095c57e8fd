package io.blackpipe.bench;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.Document;
import org.bson.RawBsonDocument;

/** The workloads, run with the real Java driver: closed loops of findOne/insertOne, and a getMore-heavy scan. */
final class Workloads {
    static final String USERS = "users";
    static final String EVENTS = "events";

    enum Workload {
        FIND("find", "findOne by _id"),
        INSERT("insert", "insertOne"),
        MIX("mix", "50/50 findOne / insertOne"),
        SCAN("scan", "getMore-heavy read of the large collection");

        final String id;
        final String description;

        Workload(String id, String description) {
            this.id = id;
            this.description = description;
        }

        static Workload of(String id) {
            for (Workload w : values()) {
                if (w.id.equals(id.trim().toLowerCase(Locale.ROOT))) {
                    return w;
                }
            }
            throw new IllegalArgumentException("unknown workload '" + id + "' (find, insert, mix, scan)");
        }
    }

    /**
     * One measured run: throughput (ops/s; documents/s for the scan) and latency percentiles in
     * microseconds; the proxy's CPU and allocation per op; the whole machine's CPU per op and its busy
     * share of all CPUs (NaN where unknown).
     */
    record Result(double opsPerSec, double p50Micros, double p99Micros, long ops, long errors, String firstError,
                  double proxyCpuMicrosPerOp, double proxyAllocBytesPerOp, double machineCpuMicrosPerOp,
                  double machineBusyShare) {
    }

    private interface Op {
        void run() throws Exception;
    }

    /** Latency samples of one thread, in nanoseconds. */
    private static final class Samples {
        long[] values = new long[1 << 14];
        int size;

        void add(long nanos) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = nanos;
        }
    }

    private Workloads() {
    }

    /**
     * {@code threads} threads each run {@code workload} back to back (closed loop) for the warm-up
     * and then the measured window; only operations that start and end inside the window count.
     */
    static Result closedLoop(MongoClient client, String database, Workload workload, int threads, int userDocs,
                             long warmupNanos, long measureNanos, long cpuPid) throws InterruptedException {
        MongoDatabase db = client.getDatabase(database);
        MongoCollection<Document> users = db.getCollection(USERS);
        MongoCollection<Document> events = db.getCollection(EVENTS);
        AtomicLong errors = new AtomicLong();
        AtomicReference<String> firstError = new AtomicReference<>();
        List<Samples> all = new ArrayList<>();
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        long[] window = new long[2];
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Samples samples = new Samples();
            all.add(samples);
            Op op = op(workload, users, events, userDocs);
            Thread worker = new Thread(() -> {
                ready.countDown();
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                long start = window[0];
                long end = window[1];
                while (true) {
                    long t0 = System.nanoTime();
                    if (t0 >= end) {
                        break;
                    }
                    try {
                        op.run();
                    } catch (Exception | AssertionError e) {
                        errors.incrementAndGet();
                        firstError.compareAndSet(null, e.getClass().getSimpleName() + ": " + e.getMessage());
                        continue;
                    }
                    long t1 = System.nanoTime();
                    if (t0 >= start && t1 <= end) {
                        samples.add(t1 - t0);
                    }
                }
            }, "bench-" + workload.id + "-" + t);
            worker.setDaemon(true);
            workers.add(worker);
            worker.start();
        }
        ready.await();
        long now = System.nanoTime();
        window[0] = now + warmupNanos;
        window[1] = now + warmupNanos + measureNanos;
        go.countDown(); // the latch publishes the window to the workers
        sleepUntil(window[0]);
        CpuMeter cpu = CpuMeter.start(cpuPid);
        sleepUntil(window[1]);
        long cpuNanos = cpu.elapsedCpuNanos();
        long allocated = cpu.elapsedAllocatedBytes();
        CpuMeter.MachineUse machine = cpu.machine();
        for (Thread worker : workers) {
            worker.join();
        }
        Result r = summarize(all, measureNanos, errors.get(), firstError.get());
        return withCpu(r, cpuNanos, allocated, machine);
    }

    private static Result withCpu(Result r, long cpuNanos, long allocatedBytes, CpuMeter.MachineUse machine) {
        return new Result(r.opsPerSec(), r.p50Micros(), r.p99Micros(), r.ops(), r.errors(), r.firstError(),
                r.ops() == 0 ? Double.NaN : cpuNanos / 1e3 / r.ops(),
                r.ops() == 0 || allocatedBytes < 0 ? Double.NaN : allocatedBytes / (double) r.ops(),
                r.ops() == 0 || machine == null ? Double.NaN : machine.busyCpuNanos() / 1e3 / r.ops(),
                machine == null ? Double.NaN : machine.busyShare());
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
        }
    }

    private static Op op(Workload workload, MongoCollection<Document> users, MongoCollection<Document> events, int userDocs) {
        return switch (workload) {
            case FIND -> () -> findOne(users, userDocs);
            case INSERT -> () -> insertOne(events);
            case MIX -> () -> {
                if (ThreadLocalRandom.current().nextBoolean()) {
                    findOne(users, userDocs);
                } else {
                    insertOne(events);
                }
            };
            case SCAN -> throw new IllegalArgumentException("the scan is not a closed loop");
        };
    }

    private static void findOne(MongoCollection<Document> users, int userDocs) {
        int id = ThreadLocalRandom.current().nextInt(userDocs);
        Document doc = users.find(Filters.eq("_id", id)).first();
        if (doc == null) {
            throw new AssertionError("findOne({_id: " + id + "}) found nothing");
        }
    }

    private static void insertOne(MongoCollection<Document> events) {
        events.insertOne(new Document("kind", "click").append("at", System.currentTimeMillis()).append("n", 1));
    }

    /**
     * Reads the large collection with {@code batchSize} until the measured time has passed (at
     * least one whole scan): throughput is documents per second, latency is per getMore round trip
     * (as the application sees it: the hasNext() that fetched the next batch).
     */
    static Result scan(MongoClient client, String database, String collection, int batchSize,
                       long warmupNanos, long measureNanos, long cpuPid) {
        MongoCollection<RawBsonDocument> big = client.getDatabase(database).getCollection(collection, RawBsonDocument.class);
        long warmupEnd = System.nanoTime() + warmupNanos;
        Samples ignored = new Samples();
        while (System.nanoTime() < warmupEnd) {
            scanOnce(big, batchSize, ignored);
        }
        Samples samples = new Samples();
        long docs = 0;
        CpuMeter cpu = CpuMeter.start(cpuPid);
        long start = System.nanoTime();
        long elapsed;
        do {
            docs += scanOnce(big, batchSize, samples);
            elapsed = System.nanoTime() - start;
        } while (elapsed < measureNanos);
        long cpuNanos = cpu.elapsedCpuNanos();
        long allocated = cpu.elapsedAllocatedBytes();
        CpuMeter.MachineUse machine = cpu.machine();
        Result latency = summarize(List.of(samples), measureNanos, 0, null);
        return withCpu(new Result(docs * 1e9 / elapsed, latency.p50Micros(), latency.p99Micros(), docs, 0, null, 0, 0, 0, 0),
                cpuNanos, allocated, machine);
    }

    private static long scanOnce(MongoCollection<RawBsonDocument> big, int batchSize, Samples getMores) {
        long docs = 0;
        try (MongoCursor<RawBsonDocument> cursor = big.find().batchSize(batchSize).iterator()) {
            while (true) {
                boolean fetches = cursor.available() == 0;
                long t0 = System.nanoTime();
                boolean more = cursor.hasNext();
                if (!more) {
                    break;
                }
                if (fetches) {
                    getMores.add(System.nanoTime() - t0);
                }
                cursor.next();
                docs++;
            }
        }
        return docs;
    }

    private static Result summarize(List<Samples> all, long measureNanos, long errors, String firstError) {
        int total = 0;
        for (Samples s : all) {
            total += s.size;
        }
        long[] merged = new long[total];
        int at = 0;
        for (Samples s : all) {
            System.arraycopy(s.values, 0, merged, at, s.size);
            at += s.size;
        }
        Arrays.sort(merged);
        return new Result(total * 1e9 / measureNanos, percentile(merged, 0.50) / 1e3, percentile(merged, 0.99) / 1e3,
                total, errors, firstError, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
    }

    private static double percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int index = (int) Math.ceil(p * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }
}
