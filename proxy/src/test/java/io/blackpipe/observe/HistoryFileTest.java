package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.blackpipe.testing.Await;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The history file's writer works in batches: nothing recorded is lost, and lines arrive while it runs. */
class HistoryFileTest {
    @TempDir
    Path dir;

    private static HistoryEntry entry(long id) {
        return new HistoryEntry(id, id, "m", "app", id, "insert", "db", "c", null, -1, 1, null, "ok", "ok", 0);
    }

    private static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void everyEntryFromEveryThreadIsInTheFileOnceAfterClose() throws Exception {
        Path file = dir.resolve("h.jsonl");
        int threads = 4;
        int perThread = 5_000;
        History history = new History(100, file);
        List<Thread> recorders = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long base = (long) t * perThread;
            Thread recorder = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    history.record(entry(base + i));
                }
            });
            recorders.add(recorder);
            recorder.start();
        }
        for (Thread recorder : recorders) {
            recorder.join();
        }
        history.close();
        Set<Long> ids = new HashSet<>();
        for (String line : lines(file)) {
            ids.add(((Number) Document.parse(line).get("connection")).longValue());
        }
        assertEquals(threads * perThread, lines(file).size(), "one line per entry");
        assertEquals(threads * perThread, ids.size(), "none twice, none missed");
    }

    @Test
    void aLineReachesTheFileSoonWithoutClosing() throws InterruptedException {
        Path file = dir.resolve("live.jsonl");
        History history;
        try {
            history = new History(100, file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            history.record(entry(1));
            Await.until(Duration.ofSeconds(5), () -> "the line while the history is open: " + lines(file),
                    () -> lines(file).size() == 1);
            history.record(entry(2));
            Await.until(Duration.ofSeconds(5), () -> "the second line too: " + lines(file), () -> lines(file).size() == 2);
        } finally {
            history.close();
        }
    }

    /**
     * A writer stuck in a write (a FIFO opened and never read: its 64 KiB fill) is said to be stuck once it has not
     * moved for the stuck interval, and given up after the longer one: the file is declared incomplete and nothing more
     * is queued for it, where before every entry waited in memory for as long as the proxy ran.
     */
    @Test
    void aWriterStuckInAWriteIsSaidToBeStuckThenGivenUp() throws Exception {
        Path fifo = dir.resolve("h.fifo");
        assumeTrue(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0, "needs mkfifo");
        CompletableFuture<InputStream> reader = CompletableFuture.supplyAsync(() -> {
            try {
                return Files.newInputStream(fifo); // opened, never read: the writer blocks once the pipe is full
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        History history = new History(10, fifo, TimeUnit.MILLISECONDS.toNanos(300), TimeUnit.SECONDS.toNanos(2), 1_000_000);
        try (InputStream held = reader.get(10, TimeUnit.SECONDS)) {
            assertNull(history.fileStuck(), "a writer that moves is not stuck");
            for (int i = 0; i < 2_000; i++) { // some 150 bytes a line: past the pipe's 64 KiB
                history.record(entry(i));
            }
            Await.until(Duration.ofSeconds(10), () -> "the writer to be said stuck", () -> history.fileStuck() != null);
            assertTrue(history.fileStuck().startsWith("the history file " + fifo + " has taken no lines for "), history.fileStuck());
            assertTrue(history.fileStuck().endsWith("(its writer is stuck writing); the lines since wait in memory, and are"
                    + " dropped if it is still stuck after 2 s or 1000000 lines"), history.fileStuck());
            assertNull(history.fileFailure(), "stuck, not yet given up");
            Thread.sleep(2_500); // past the give-up time, and nothing recorded: as in a process paused whole
            history.record(entry(-2));
            assertNull(history.fileFailure(), "the loops first found it stuck just now: the give-up counts from then");
            Await.until(Duration.ofSeconds(10), () -> "an entry recorded after 2 s stuck to give the file up", () -> {
                history.record(entry(-1));
                return history.fileFailure() != null;
            });
            assertTrue(history.fileFailure().matches("the history file \\S+ took no lines for \\d+ s \\(its writer is stuck writing\\),"
                    + " \\d+ lines queued since it was found stuck; the lines after that were not written"), history.fileFailure());
            assertNull(history.fileStuck(), "given up: the failure says it now");
            for (int i = 0; i < 1_000; i++) {
                history.record(entry(i));
            }
            assertEquals(0, history.waitingLines(), "what waited was dropped, and nothing more is queued");
        } // the reader closes: the stuck write fails (a broken pipe), which ends the writer
        history.close();
        assertTrue(history.fileFailure().contains("took no lines for"), "the first word stays: " + history.fileFailure());
    }

    /**
     * A stuck writer is given up once more lines than the bound queued for it, without waiting out the time: at a busy
     * proxy's rate, 60 s of lines waiting could fill a sidecar's heap first.
     */
    @Test
    void aWriterStuckWithTooManyLinesWaitingIsGivenUpBeforeItsTime() throws Exception {
        Path fifo = dir.resolve("lines.fifo");
        assumeTrue(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0, "needs mkfifo");
        CompletableFuture<InputStream> reader = CompletableFuture.supplyAsync(() -> {
            try {
                return Files.newInputStream(fifo); // opened, never read
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        History history = new History(10, fifo, TimeUnit.MILLISECONDS.toNanos(300), TimeUnit.HOURS.toNanos(1), 5_000);
        try (InputStream held = reader.get(10, TimeUnit.SECONDS)) {
            for (int i = 0; i < 2_000; i++) { // past the pipe's 64 KiB: the writer blocks
                history.record(entry(i));
            }
            Await.until(Duration.ofSeconds(10), () -> "the writer to be said stuck", () -> history.fileStuck() != null);
            assertNull(history.fileFailure(), "stuck, an hour from its time");
            for (int i = 0; i < 5_000; i++) {
                history.record(entry(i));
            }
            assertNull(history.fileFailure(), "5,000 lines queued while stuck: the bound, not past it");
            history.record(entry(5_001));
            assertTrue(history.fileFailure() != null && history.fileFailure().contains(", 5001 lines queued since it was found stuck;"), history.fileFailure());
            assertEquals(0, history.waitingLines(), "what waited was dropped");
        }
        history.close();
    }

    /** A writer that waits for lines is inside no write, so however long nothing comes, it is not stuck. */
    @Test
    void anIdleWriterIsNeverStuck() throws Exception {
        History history = new History(10, dir.resolve("idle.jsonl"), TimeUnit.MILLISECONDS.toNanos(50), TimeUnit.MILLISECONDS.toNanos(100), 10);
        try {
            history.record(entry(1));
            Thread.sleep(400);
            assertNull(history.fileStuck());
            history.record(entry(2));
            assertNull(history.fileFailure(), "recorded after 400 ms of nothing, past both bounds");
        } finally {
            history.close();
        }
    }

    @Test
    void aFileThatCannotBeOpenedIsNamed() {
        Path file = dir.resolve("no-such-dir").resolve("h.jsonl");
        IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> History.open(10, file));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().startsWith("cannot open the history file " + file), e.getMessage());
    }
}
