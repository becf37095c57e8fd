package io.blackpipe.pipe;

import io.blackpipe.wire.MalformedMessageException;
import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * The requests of one connection that wait their turn: while one is held (a blockConnection, a
 * blackhole), the ones behind it queue in order, and the client's reads pause once it sends more;
 * behind one held with no end in sight (a hang, for good; a waitForFailPoint, until answered; a
 * blackhole, until restored; a command waiting its turn at the member: a retried write behind its first
 * run, a commit or a write behind one another) reads go on
 * for a while. Used from the connection's event loop only.
 */
final class WaitingRequests {
    /**
     * What a client may send behind a request held with no end in sight before its reads pause (about
     * what a server's socket buffers take before the client's writes block); reading on until then lets
     * its close end the wait.
     */
    static final long MAX_BYTES_BEHIND_AN_OPEN_HOLD = 16L << 20;
    private final ClientConnection connection;
    private final Consumer<ByteBuf> process;
    private final Consumer<ByteBuf> cutByTheClose;
    private final ArrayDeque<ByteBuf> queued = new ArrayDeque<>();
    private boolean holding;
    private boolean openEnded;
    private long bytesBehindTheOpenHold;
    /** What a blackhole, or a command waiting its turn, holds: to run when it ends (or when the client leaves). */
    private Runnable afterTheOpenHold;
    /** The end of the timed hold under way (a rule's block), to run early; null when none is. */
    private Runnable timedHold;

    /**
     * @param process takes each queued request in turn once the held one went on
     * @param cutByTheClose counts a request that still waited when the connection closed (it is released after)
     */
    WaitingRequests(ClientConnection connection, Consumer<ByteBuf> process, Consumer<ByteBuf> cutByTheClose) {
        this.connection = connection;
        this.process = process;
        this.cutByTheClose = cutByTheClose;
    }

    /** True, with the request queued, while an earlier one is held: it must not overtake it. */
    boolean queueBehindTheHeld(ByteBuf frame) {
        if (!holding) {
            return false;
        }
        queued.add(frame);
        if (!openEnded) {
            connection.pauseClientReads(true); // and the client may queue no more than this
        } else if ((bytesBehindTheOpenHold += frame.readableBytes()) > MAX_BYTES_BEHIND_AN_OPEN_HOLD) {
            connection.pauseClientReads(true); // its close goes unseen now, as a stuck server's would
        }
        return true;
    }

    /**
     * Stops taking requests until {@link #endOpenHold} or a blackhole's end (never, for a hang: as
     * behind a mongod stuck on a command, nothing sent after it is taken).
     */
    void holdOpenEnded() {
        holding = true;
        readOnUntilTheLimit();
    }

    /** Reads go on until the queue holds the limit (it may come up behind a timed hold, which paused them). */
    private void readOnUntilTheLimit() {
        openEnded = true;
        bytesBehindTheOpenHold = 0;
        for (ByteBuf frame : queued) {
            bytesBehindTheOpenHold += frame.readableBytes();
        }
        connection.pauseClientReads(bytesBehindTheOpenHold > MAX_BYTES_BEHIND_AN_OPEN_HOLD);
    }

    /** The request held by {@link #holdOpenEnded} was answered: the ones behind it go on. */
    void endOpenHold() {
        resume(() -> { });
    }

    /** Stops taking requests for a while; what arrives meanwhile waits its turn. */
    void hold(long millis, Runnable then) {
        holding = true;
        // Reads go on until the client sends more (then they pause): with reads paused the client's
        // close would go unseen, and a command it gave up on would be forwarded after the wait.
        Runnable[] end = new Runnable[1];
        end[0] = () -> {
            if (timedHold == end[0]) { // once: ended early, the scheduled end finds another hold or none
                timedHold = null;
                resume(then);
            }
        };
        timedHold = end[0];
        connection.schedule(millis, end[0]);
    }

    /** The timed hold under way, if any, ends now (its command sees why: the member exits, see Exchange#exitingWith). */
    void endTimedHoldNow() {
        Runnable end = timedHold;
        if (end != null) {
            end.run();
        }
    }

    /**
     * A request that reaches a blackholed member waits, as over a partitioned network, and goes on
     * when the blackhole ends ({@link #blackholeEnded}), the requests behind it after it; if its
     * client gives up first, it goes nowhere.
     */
    void holdThroughTheBlackhole(ByteBuf frame, Runnable whenItEnds, Runnable ifTheClientLeft) {
        holdUntilCalledOff(frame, whenItEnds, ifTheClientLeft);
    }

    /**
     * A command waits its turn at the member: a retried write while its first run is still there (see RetriedWrites), as
     * behind mongod's session that run checked out; a commit or a write behind one another (see CommitsAlone). It asks
     * again when {@link #itsTurnMayHaveCome}; if its client gives up first, it goes nowhere.
     */
    void holdUntilItsTurn(ByteBuf frame, Runnable whenItEnds, Runnable ifTheClientLeft) {
        holdUntilCalledOff(frame, whenItEnds, ifTheClientLeft);
    }

    private void holdUntilCalledOff(ByteBuf frame, Runnable whenItEnds, Runnable ifTheClientLeft) {
        holdOpenEnded(); // it may last long: reads go on, so that the client's close is seen
        afterTheOpenHold = () -> {
            if (connection.isOpen()) {
                goOn(frame, whenItEnds);
            } else {
                frame.release();
                ifTheClientLeft.run();
            }
        };
    }

    /**
     * A held request goes on, read now as it would have been when it came: what that throws (a malformed message) finds
     * the request not passed on yet, so it is released here, as {@code Exchange#onRequest} releases it, before the
     * connection closes.
     */
    static void goOn(ByteBuf frame, Runnable then) {
        try {
            then.run();
        } catch (RuntimeException e) {
            frame.release();
            throw e;
        }
    }

    void blackholeEnded() {
        callOffTheOpenHold();
    }

    /** What a command waited for ended: it asks again, and may wait again. */
    void itsTurnMayHaveCome() {
        callOffTheOpenHold();
    }

    private void callOffTheOpenHold() {
        Runnable then = afterTheOpenHold;
        afterTheOpenHold = null;
        if (then != null) {
            resume(then);
        }
    }

    private void resume(Runnable then) {
        if (connection.blackholed()) { // a blackhole began (or began again) while it was held: it waits for that too
            afterTheOpenHold = then;
            readOnUntilTheLimit();
            return;
        }
        holding = false;
        openEnded = false;
        bytesBehindTheOpenHold = 0;
        then.run();
        while (!holding && !queued.isEmpty() && connection.isOpen()) {
            process.accept(queued.poll());
        }
        // what went on goes out now, even when a request behind it is held in turn (a block, a hang)
        connection.flushUpstream();
        connection.flushClient();
        if (!holding) {
            connection.pauseClientReads(false);
        }
    }

    /** Runs {@code pass} now, or when the blackhole the connection is in ends (never, if the client leaves first). */
    void afterAnyBlackhole(ByteBuf frame, Runnable pass) {
        if (connection.blackholed()) {
            holdThroughTheBlackhole(frame, pass, () -> { });
        } else {
            pass.run();
        }
    }

    /** The client left: what a blackhole or a turn held ends (it gave up on it), and so does what queued behind it. */
    void clientLeft() {
        Runnable held = afterTheOpenHold;
        afterTheOpenHold = null;
        if (held != null) {
            held.run();
        }
        ByteBuf frame;
        while ((frame = queued.poll()) != null) {
            try {
                cutByTheClose.accept(frame);
            } catch (MalformedMessageException e) {
                // it would have closed the connection in its turn: no command to count
            } finally {
                frame.release();
            }
        }
    }
}
