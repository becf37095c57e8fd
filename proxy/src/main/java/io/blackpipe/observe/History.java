package io.blackpipe.observe;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The operation history: the latest entries in memory (for the admin API) and, when a file is
 * given, every entry as a JSON line, written by a background thread so the event loops never
 * wait for the disk.
 *
 * <p>Each recording thread (an event loop) keeps its own ring of recent entries: one shared
 * ring under one lock made every command of every event loop write the same cache lines, which
 * cost more than the rest of the recording together. Readers merge the rings by recording time.
 * Each ring holds up to the capacity (one thread may record everything), so memory is bounded by
 * the capacity times the number of event loops.
 */
public final class History implements AutoCloseable {
    /**
     * How long the file writer sleeps between batches. Waking it for every entry (a blocking queue's
     * signal) cost each command a futex wake-up on its event loop, microseconds; a line now reaches
     * the file within this interval instead.
     */
    private static final long WRITE_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** A write that has not returned for this long is stuck (a pipe nobody reads, a hung volume): /health says so. */
    static final long STUCK_NANOS = TimeUnit.SECONDS.toNanos(5);
    /**
     * A writer stuck this long, or with this many lines queued while the event loops saw it stuck, is given up: what
     * waits for it is dropped and no more is queued, so memory stays bounded (a line waiting takes some 110 bytes:
     * 100,000 are 11 MB, where 60 s of a busy proxy's lines could fill a sidecar's heap).
     */
    static final long GIVE_UP_NANOS = TimeUnit.SECONDS.toNanos(60);
    static final int GIVE_UP_LINES = 100_000;
    /**
     * How often the writer marks that it moves: a line written this long after the last mark marks it again, so a slow
     * disk, whose writes return, is never stuck, and the event loops read a field that changes a few times a second.
     */
    private static final long MARK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long NOT_WRITING = Long.MIN_VALUE;

    private final int capacity;
    private final List<HistoryRing> rings = new CopyOnWriteArrayList<>();
    private final ThreadLocal<HistoryRing> ringOfThisThread = ThreadLocal.withInitial(this::newRing);
    private final Queue<HistoryEntry> toWrite;
    private final Thread writer;
    private volatile boolean closing;
    private final Path file;
    /** Why the file stopped taking lines ("the history file F stopped: reason"), or null while it takes them. */
    private volatile String fileFailure;
    private final List<Consumer<HistoryEntry>> followers = new CopyOnWriteArrayList<>();
    /**
     * Since when the writer has been in its current write, or {@link #NOT_WRITING} while it waits for lines: only a
     * writer inside a write can be stuck, so a process paused whole (SIGSTOP, docker pause) blames no parked writer.
     */
    private volatile long inWriteSinceNanos = NOT_WRITING;
    /** The writer's own last mark: it marks again once {@link #MARK_NANOS} passed. */
    private long markedNanos;
    /**
     * The mark the event loops found stuck, when they first found it so, and the lines queued since: a process paused
     * whole (SIGSTOP, docker pause) finds an old mark at once as it resumes, so the give-up counts from this, not the
     * mark. Guarded by this History; only a stuck writer's recorders come here.
     */
    private long stuckMark = NOT_WRITING;
    private long stuckSeenNanos;
    private long queuedWhileStuck;
    private final long stuckNanos;
    private final long giveUpNanos;
    private final int giveUpLines;

    public History(int capacity, Path file) throws IOException {
        this(capacity, file, STUCK_NANOS, GIVE_UP_NANOS, GIVE_UP_LINES);
    }

    History(int capacity, Path file, long stuckNanos, long giveUpNanos, int giveUpLines) throws IOException {
        this.capacity = capacity;
        this.file = file;
        this.stuckNanos = stuckNanos;
        this.giveUpNanos = giveUpNanos;
        this.giveUpLines = giveUpLines;
        if (file == null) {
            toWrite = null;
            writer = null;
            return;
        }
        BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        toWrite = new ConcurrentLinkedQueue<>();
        writer = new Thread(() -> drain(out), "blackpipe-history");
        writer.setDaemon(true);
        writer.start();
    }

    /** Kept in memory, and appended to {@code file} unless it is null; a file that cannot be opened is named. */
    public static History open(int capacity, Path file) {
        try {
            return new History(capacity, file);
        } catch (IOException e) {
            throw new IllegalStateException("cannot open the history file " + file + ": " + why(e, file), e);
        }
    }

    /** What was wrong: a FileSystemException's message is the bare path ("h.jsonl: h.jsonl" said nothing). */
    private static String why(IOException e, Path file) {
        if (e instanceof NoSuchFileException) {
            return "its directory " + file.toAbsolutePath().getParent() + " does not exist";
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof FileSystemException fileSystem && fileSystem.getReason() != null) {
            return fileSystem.getReason(); // e.g. "Is a directory"
        }
        return e.getMessage();
    }

    public static History inMemory(int capacity) {
        try {
            return new History(capacity, null);
        } catch (IOException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    public void record(HistoryEntry entry) {
        record(entry, System.nanoTime());
    }

    /** The same, with the System.nanoTime() the caller already read (readers order the entries by it). */
    public void record(HistoryEntry entry, long nowNanos) {
        HistoryRing ring = ringOfThisThread.get();
        synchronized (ring) { // uncontended but for a reader: only this thread records into this ring
            ring.add(entry, nowNanos);
            if (!followers.isEmpty()) { // inside the lock, so follow() neither misses nor repeats this entry
                for (Consumer<HistoryEntry> follower : followers) {
                    follower.accept(entry);
                }
            }
        }
        if (toWrite != null && fileFailure == null) { // a stopped file takes no more: its queue would only grow
            long since = inWriteSinceNanos;
            if (since == NOT_WRITING || nowNanos - since <= stuckNanos || !givesUp(since, nowNanos)) {
                toWrite.add(entry);
            }
        }
    }

    /**
     * Why the history file stopped taking lines during the run (a full disk, a removed volume), naming it, or null while
     * it takes them (or without a file). The CLI ends with a non-zero exit status then, as the file is incomplete.
     */
    public String fileFailure() {
        return fileFailure;
    }

    /**
     * While the file's writer has been stuck in a write for a while (a pipe nobody reads, a hung volume), what that
     * means, naming the file; null while it writes (or without a file, or once it stopped: see {@link #fileFailure}).
     */
    public String fileStuck() {
        long since = inWriteSinceNanos;
        long stuckFor = System.nanoTime() - since;
        if (toWrite == null || fileFailure != null || closing || since == NOT_WRITING || stuckFor <= stuckNanos) {
            return null;
        }
        return "the history file " + file + " has taken no lines for " + seconds(stuckFor) + " (its writer is stuck writing);"
                + " the lines since wait in memory, and are dropped if it is still stuck after " + seconds(giveUpNanos)
                + " or " + giveUpLines + " lines";
    }

    private static String seconds(long nanos) {
        return TimeUnit.NANOSECONDS.toSeconds(nanos) + " s";
    }

    /**
     * The entries so far, then every new one as it is recorded, until the returned handle is
     * closed. {@code follower} runs on the recording thread: it must only hand the entry on.
     */
    public AutoCloseable follow(Consumer<HistoryEntry> follower) {
        synchronized (rings) { // rings are locked in one order (their list's), by one follow() at a time
            List<HistoryRing> locked = List.copyOf(rings);
            lockAll(locked, 0, () -> {
                merged(locked, Long.MIN_VALUE, false).forEach(follower);
                followers.add(follower);
            });
        }
        return () -> followers.remove(follower);
    }

    /** The latest entries (at most the capacity), oldest first. */
    public List<HistoryEntry> recent() {
        return merged(List.copyOf(rings), Long.MIN_VALUE, false);
    }

    /** The latest entries recorded at or after {@code sinceNanos} (a System.nanoTime() reading), oldest first. */
    public List<HistoryEntry> recentSince(long sinceNanos) {
        return merged(List.copyOf(rings), sinceNanos, true);
    }

    private HistoryRing newRing() {
        HistoryRing ring = new HistoryRing(capacity);
        synchronized (rings) { // a follow() in progress sees the ring list before or after this one joins
            rings.add(ring);
        }
        return ring;
    }

    private static void lockAll(List<HistoryRing> locked, int from, Runnable then) {
        if (from == locked.size()) {
            then.run();
            return;
        }
        synchronized (locked.get(from)) {
            lockAll(locked, from + 1, then);
        }
    }

    /** The rings' entries in recording order, the latest {@code capacity} of them, those since {@code sinceNanos} if {@code since}. */
    private List<HistoryEntry> merged(List<HistoryRing> sources, long sinceNanos, boolean since) {
        List<HistoryRing.Snapshot> snapshots = new ArrayList<>(sources.size());
        int total = 0;
        for (HistoryRing ring : sources) {
            HistoryRing.Snapshot snapshot = ring.snapshot();
            snapshots.add(snapshot);
            total += snapshot.size();
        }
        List<HistoryEntry> all = new ArrayList<>(total);
        int[] next = new int[snapshots.size()];
        for (int taken = 0; taken < total; taken++) {
            int earliest = -1;
            for (int s = 0; s < snapshots.size(); s++) {
                if (next[s] < snapshots.get(s).size() && (earliest < 0
                        || snapshots.get(s).recordedAt(next[s]) < snapshots.get(earliest).recordedAt(next[earliest]))) {
                    earliest = s;
                }
            }
            HistoryRing.Snapshot source = snapshots.get(earliest);
            if (!since || source.recordedAt(next[earliest]) - sinceNanos >= 0) { // nanoTime: compare differences
                all.add(source.entry(next[earliest]));
            }
            next[earliest]++;
        }
        return all.size() <= capacity ? all : new ArrayList<>(all.subList(all.size() - capacity, all.size()));
    }

    private void drain(BufferedWriter out) {
        try (out) {
            while (true) {
                boolean last = closing; // read before draining: whatever was recorded before close() is written
                HistoryEntry entry;
                while ((entry = toWrite.poll()) != null) {
                    long now = System.nanoTime();
                    if (now - markedNanos > MARK_NANOS || inWriteSinceNanos == NOT_WRITING) {
                        writingFromNow(now);
                    }
                    out.write(entry.toJson());
                    out.newLine();
                }
                writingFromNow(System.nanoTime());
                out.flush();
                inWriteSinceNanos = NOT_WRITING;
                if (last) {
                    return;
                }
                LockSupport.parkNanos(this, WRITE_INTERVAL_NANOS);
            }
        } catch (IOException | RuntimeException | Error e) { // any end but the last line: the file is not whole
            failed("stopped: " + e.getMessage());
        }
    }

    /** The writer moved: its next write starts now (at most every {@link #MARK_NANOS}, see there). */
    private void writingFromNow(long nowNanos) {
        markedNanos = nowNanos;
        inWriteSinceNanos = nowNanos;
    }

    /**
     * A line recorded while the writer's {@code mark} is stuck: whether that gives the file up (failed, then), once the
     * loops saw the same mark stuck for the rest of the give-up time, or queued the give-up's lines meanwhile.
     */
    private synchronized boolean givesUp(long mark, long nowNanos) {
        if (fileFailure != null) {
            return true;
        }
        if (mark != stuckMark) {
            stuckMark = mark;
            stuckSeenNanos = nowNanos;
            queuedWhileStuck = 0;
        }
        if (nowNanos - stuckSeenNanos <= giveUpNanos - stuckNanos && ++queuedWhileStuck <= giveUpLines) {
            return false;
        }
        failed("took no lines for " + seconds(nowNanos - mark) + " (its writer is stuck writing), " + queuedWhileStuck
                + " lines queued since it was found stuck");
        return true;
    }

    /** How many lines wait for the writer (for tests: a given-up file keeps none). */
    int waitingLines() {
        return toWrite == null ? 0 : toWrite.size();
    }

    private synchronized void failed(String how) {
        if (fileFailure != null) { // said once: several event loops may find the writer stuck at once
            return;
        }
        fileFailure = "the history file " + file + " " + how + "; the lines after that were not written";
        toWrite.clear();
        System.getLogger("blackpipe").log(System.Logger.Level.ERROR, fileFailure);
    }

    @Override
    public void close() {
        if (writer != null) {
            closing = true;
            LockSupport.unpark(writer);
            try {
                writer.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (writer.isAlive() && fileFailure == null) { // stuck in a write (a stalled pipe, a hung volume): not whole
                failed("was not completed within 5 s (its writer is stuck writing)");
            }
        }
    }
}
