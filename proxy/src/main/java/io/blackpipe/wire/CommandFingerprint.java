package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * A hash of a command that stays the same when a driver retries it: the fields that
 * legitimately change between attempts ($clusterTime gossip, readConcern's afterClusterTime,
 * maxTimeMS, which a driver with timeoutMS recomputes for every attempt) and the session fields
 * are left out. Document sequences (an insert's documents, an update's updates) are part of it.
 */
public final class CommandFingerprint {
    private CommandFingerprint() {
    }

    /** Walks the body of {@code frame} on its own; {@link CommandFacts} gets the same value from its one scan. */
    public static long of(ByteBuf frame, OpMsg msg) {
        Runs runs = new Runs();
        BsonCursor body = msg.body(frame);
        while (body.next()) {
            runs.add(body);
        }
        return runs.hash(frame, msg);
    }

    /** Whether the element at the cursor is one a retry may change, so left out of the hash. */
    static boolean leftOut(BsonCursor element) {
        return element.nameIs("$clusterTime") || element.nameIs("readConcern") || element.nameIs("lsid")
                || element.nameIs("txnNumber") || element.nameIs("maxTimeMS");
    }

    /**
     * Where the hashed elements of a body are: elements kept one after another form one run, hashed
     * in one update. Noted while a scan walks the body, hashed at the end only if wanted. A
     * connection's scanner keeps one and {@link #clear}s it for each command.
     */
    static final class Runs {
        private final CRC32C crc = new CRC32C();
        // A body has one or two runs (a driver appends the session fields last); more are kept in an array.
        private int firstStart;
        private int firstEnd;
        private int secondStart;
        private int secondEnd;
        private int[] more; // bounds of the third run on
        private int count;
        private boolean open;

        /** Forgets the previous body's runs (the array of further runs is kept for the next). */
        Runs clear() {
            count = 0;
            open = false;
            return this;
        }

        void add(BsonCursor element) {
            if (leftOut(element)) {
                open = false;
            } else if (open) {
                set(2 * count - 1, element.valueEnd());
            } else {
                open = true;
                count++;
                set(2 * count - 2, element.elementOffset());
                set(2 * count - 1, element.valueEnd());
            }
        }

        /** Bound {@code i}: a run's start at 2 * run, its end at 2 * run + 1. */
        private void set(int i, int value) {
            switch (i) {
                case 0 -> firstStart = value;
                case 1 -> firstEnd = value;
                case 2 -> secondStart = value;
                case 3 -> secondEnd = value;
                default -> {
                    if (more == null) {
                        more = new int[8];
                    } else if (i - 4 == more.length) {
                        more = Arrays.copyOf(more, more.length * 2);
                    }
                    more[i - 4] = value;
                }
            }
        }

        long hash(ByteBuf frame, OpMsg msg) {
            crc.reset();
            // One NIO view of the frame serves every range (a view per range was an allocation per BSON
            // field of every command with a session). The internal view of a pooled buffer is reused,
            // not made anew; it is only read here, on this thread.
            ByteBuffer view = frame.nioBufferCount() == 1 ? frame.internalNioBuffer(frame.readerIndex(), frame.readableBytes()) : null;
            int viewStart = view == null ? 0 : view.position();
            if (count > 0) {
                update(crc, frame, view, viewStart, firstStart, firstEnd - firstStart);
            }
            if (count > 1) {
                update(crc, frame, view, viewStart, secondStart, secondEnd - secondStart);
            }
            for (int i = 0; i < 2 * count - 4; i += 2) {
                update(crc, frame, view, viewStart, more[i], more[i + 1] - more[i]);
            }
            // the kind-1 sections, before and after the body section (its kind byte precedes bodyOffset)
            int sectionsStart = frame.readerIndex() + Frames.HEADER_LENGTH + 4;
            int bodyEnd = msg.bodyOffset() + frame.getIntLE(msg.bodyOffset());
            update(crc, frame, view, viewStart, sectionsStart, msg.bodyOffset() - 1 - sectionsStart);
            update(crc, frame, view, viewStart, bodyEnd, msg.sectionsEnd() - bodyEnd);
            return crc.getValue();
        }
    }

    private static void update(CRC32C crc, ByteBuf frame, ByteBuffer view, int viewStart, int start, int length) {
        if (length <= 0) {
            return;
        }
        if (view != null) {
            // the view starts where the frame does, at whatever position the view gave it
            int offset = viewStart + start - frame.readerIndex();
            view.limit(offset + length); // first the limit (a position beyond it is pulled back), then the position
            view.position(offset);
            crc.update(view);
        } else {
            byte[] bytes = new byte[length];
            frame.getBytes(start, bytes);
            crc.update(bytes);
        }
    }
}
