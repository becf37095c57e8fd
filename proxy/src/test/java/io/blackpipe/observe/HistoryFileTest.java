package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
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

    @Test
    void aFileThatCannotBeOpenedIsNamed() {
        Path file = dir.resolve("no-such-dir").resolve("h.jsonl");
        IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> History.open(10, file));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().startsWith("cannot open the history file " + file), e.getMessage());
    }
}
