package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The in-memory history kept per recording thread: what readers see is one history in recording
 * order, bounded by the capacity, and a follower sees every entry exactly once.
 */
class HistoryMemoryTest {
    private static HistoryEntry entry(long id) {
        return new HistoryEntry(id, id, "m", "app", id, "find", "db", "c", null, -1, 1, null, "ok", "ok", 0);
    }

    private static List<Long> ids(List<HistoryEntry> entries) {
        List<Long> ids = new ArrayList<>();
        entries.forEach(e -> ids.add(e.connectionId()));
        return ids;
    }

    private static void onThread(Runnable work) throws InterruptedException {
        Thread thread = new Thread(work);
        thread.start();
        thread.join();
    }

    @Test
    void entriesFromSeveralThreadsReadBackInRecordingOrder() throws InterruptedException {
        History history = History.inMemory(100);
        onThread(() -> history.record(entry(1)));
        history.record(entry(2));
        onThread(() -> history.record(entry(3)));
        history.record(entry(4));
        onThread(() -> history.record(entry(5)));
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), ids(history.recent()));
    }

    @Test
    void recentHoldsTheLatestCapacityEntriesAcrossThreads() throws InterruptedException {
        int capacity = 50;
        History history = History.inMemory(capacity);
        for (long id = 1; id <= 4 * capacity; id++) {
            long recorded = id;
            if (id % 3 == 0) {
                onThread(() -> history.record(entry(recorded)));
            } else {
                history.record(entry(recorded));
            }
        }
        List<Long> expected = new ArrayList<>();
        for (long id = 3 * capacity + 1; id <= 4 * capacity; id++) {
            expected.add(id);
        }
        assertEquals(expected, ids(history.recent()));
    }

    @Test
    void aFollowerJoiningWhileThreadsRecordSeesEveryEntryExactlyOnce() throws InterruptedException {
        int threads = 4;
        int perThread = 20_000;
        History history = History.inMemory(threads * perThread);
        List<HistoryEntry> seen = new CopyOnWriteArrayList<>();
        CountDownLatch halfway = new CountDownLatch(threads);
        List<Thread> recorders = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long base = (long) t * perThread;
            Thread recorder = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    history.record(entry(base + i));
                    if (i == perThread / 2) {
                        halfway.countDown();
                    }
                }
            });
            recorders.add(recorder);
            recorder.start();
        }
        halfway.await();
        AutoCloseable following = history.follow(seen::add);
        for (Thread recorder : recorders) {
            recorder.join();
        }
        Set<Long> distinct = new HashSet<>(ids(seen));
        assertEquals(seen.size(), distinct.size(), "no entry twice");
        assertEquals(threads * perThread, distinct.size(), "no entry missed");
        // each thread's entries arrive in the order it recorded them
        long[] last = new long[threads];
        java.util.Arrays.fill(last, -1);
        for (HistoryEntry e : seen) {
            int t = (int) (e.connectionId() / perThread);
            assertTrue(e.connectionId() > last[t], "thread " + t + " out of order at " + e.connectionId());
            last[t] = e.connectionId();
        }
        assertEquals(threads * perThread, history.recent().size());
        try {
            following.close();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
