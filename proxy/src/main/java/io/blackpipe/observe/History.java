package io.blackpipe.observe;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The operation history: the latest entries in memory (for the admin API) and, when a file is
 * given, every entry as a JSON line, written by a background thread so the event loops never
 * wait for the disk.
 */
public final class History implements AutoCloseable {
    private static final HistoryEntry END = new HistoryEntry(0, 0, "", "", 0, "", "", "", null, -1, 0, null, "", "", 0);

    private final int capacity;
    private final ArrayDeque<HistoryEntry> recent;
    private final BlockingQueue<HistoryEntry> toWrite;
    private final Thread writer;
    private final List<Consumer<HistoryEntry>> followers = new CopyOnWriteArrayList<>();

    public History(int capacity, Path file) throws IOException {
        this.capacity = capacity;
        this.recent = new ArrayDeque<>(Math.min(capacity, 1024));
        if (file == null) {
            toWrite = null;
            writer = null;
            return;
        }
        BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        toWrite = new LinkedBlockingQueue<>();
        writer = new Thread(() -> drain(out), "blackpipe-history");
        writer.setDaemon(true);
        writer.start();
    }

    public static History inMemory(int capacity) {
        try {
            return new History(capacity, null);
        } catch (IOException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    public void record(HistoryEntry entry) {
        synchronized (recent) {
            if (recent.size() == capacity) {
                recent.removeFirst();
            }
            recent.addLast(entry);
        }
        if (toWrite != null) {
            toWrite.add(entry);
        }
        if (!followers.isEmpty()) { // no iterator to allocate per command when nobody follows
            for (Consumer<HistoryEntry> follower : followers) {
                follower.accept(entry);
            }
        }
    }

    /**
     * The entries so far, then every new one as it is recorded, until the returned handle is
     * closed. {@code follower} runs on the recording thread: it must only hand the entry on.
     */
    public AutoCloseable follow(Consumer<HistoryEntry> follower) {
        synchronized (recent) {
            recent.forEach(follower);
            followers.add(follower);
        }
        return () -> followers.remove(follower);
    }

    public List<HistoryEntry> recent() {
        synchronized (recent) {
            return new ArrayList<>(recent);
        }
    }

    private void drain(BufferedWriter out) {
        try (out) {
            while (true) {
                HistoryEntry entry = toWrite.take();
                if (entry == END) {
                    return;
                }
                out.write(entry.toJson());
                out.newLine();
                if (toWrite.isEmpty()) {
                    out.flush();
                }
            }
        } catch (IOException | InterruptedException e) {
            System.getLogger("blackpipe").log(System.Logger.Level.ERROR, "the history file stopped: " + e.getMessage());
        }
    }

    @Override
    public void close() {
        if (writer != null) {
            toWrite.add(END);
            try {
                writer.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
