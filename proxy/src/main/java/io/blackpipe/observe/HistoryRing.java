package io.blackpipe.observe;

/** The recent entries of one recording thread, with when each was recorded; guarded by itself. */
final class HistoryRing {
    private final int capacity;
    private HistoryEntry[] entries = new HistoryEntry[16];
    private long[] recordedAt = new long[16];
    private int first;
    private int size;

    HistoryRing(int capacity) {
        this.capacity = capacity;
    }

    void add(HistoryEntry entry, long nanos) {
        if (size == entries.length && size < capacity) {
            grow();
        }
        int slot = (first + size) % entries.length;
        if (size == entries.length) { // full at capacity: the oldest goes
            first = (first + 1) % entries.length;
        } else {
            size++;
        }
        entries[slot] = entry;
        recordedAt[slot] = nanos;
    }

    private void grow() {
        int length = Math.min(capacity, entries.length * 2);
        HistoryEntry[] grownEntries = new HistoryEntry[length];
        long[] grownRecordedAt = new long[length];
        for (int i = 0; i < size; i++) {
            grownEntries[i] = entries[(first + i) % entries.length];
            grownRecordedAt[i] = recordedAt[(first + i) % entries.length];
        }
        entries = grownEntries;
        recordedAt = grownRecordedAt;
        first = 0;
    }

    synchronized Snapshot snapshot() {
        HistoryEntry[] copiedEntries = new HistoryEntry[size];
        long[] copiedRecordedAt = new long[size];
        for (int i = 0; i < size; i++) {
            copiedEntries[i] = entries[(first + i) % entries.length];
            copiedRecordedAt[i] = recordedAt[(first + i) % entries.length];
        }
        return new Snapshot(copiedEntries, copiedRecordedAt);
    }

    record Snapshot(HistoryEntry[] entries, long[] recordedAts) {
        int size() {
            return entries.length;
        }

        HistoryEntry entry(int i) {
            return entries[i];
        }

        long recordedAt(int i) {
            return recordedAts[i];
        }
    }
}
