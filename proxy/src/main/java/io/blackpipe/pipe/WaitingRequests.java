package io.blackpipe.pipe;

import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * The requests of one connection that wait their turn: while one is held (a blockConnection, a
 * blackhole), the ones behind it queue in order, and the client's reads pause once it sends more.
 * Used from the connection's event loop only.
 */
final class WaitingRequests {
    private final ClientConnection connection;
    private final Consumer<ByteBuf> process;
    private final ArrayDeque<ByteBuf> queued = new ArrayDeque<>();
    private boolean holding;
    /** What a blackhole holds, to run when it ends (or when the client leaves). */
    private Runnable afterTheBlackhole;

    /** @param process takes each queued request in turn once the held one went on */
    WaitingRequests(ClientConnection connection, Consumer<ByteBuf> process) {
        this.connection = connection;
        this.process = process;
    }

    /** True, with the request queued, while an earlier one is held: it must not overtake it. */
    boolean queueBehindTheHeld(ByteBuf frame) {
        if (!holding) {
            return false;
        }
        queued.add(frame);
        connection.pauseClientReads(true); // and the client may queue no more than this
        return true;
    }

    /** Stops taking requests for a while; what arrives meanwhile waits its turn. */
    void hold(long millis, Runnable then) {
        holding = true;
        // Reads go on until the client sends more (then they pause): with reads paused the client's
        // close would go unseen, and a command it gave up on would be forwarded after the wait.
        connection.schedule(millis, () -> resume(then));
    }

    /**
     * A request that reaches a blackholed member waits, as over a partitioned network, and goes on
     * when the blackhole ends ({@link #blackholeEnded}), the requests behind it after it; if its
     * client gives up first, it goes nowhere.
     */
    void holdThroughTheBlackhole(ByteBuf frame, Runnable whenItEnds, Runnable ifTheClientLeft) {
        holding = true;
        afterTheBlackhole = () -> {
            if (connection.isOpen()) {
                whenItEnds.run();
            } else {
                frame.release();
                ifTheClientLeft.run();
            }
        };
    }

    void blackholeEnded() {
        Runnable then = afterTheBlackhole;
        afterTheBlackhole = null;
        if (then != null) {
            resume(then);
        }
    }

    private void resume(Runnable then) {
        if (connection.blackholed()) { // a blackhole began (or began again) while it was held: it waits for that too
            afterTheBlackhole = then;
            return;
        }
        holding = false;
        then.run();
        while (!holding && !queued.isEmpty() && connection.isOpen()) {
            process.accept(queued.poll());
        }
        if (!holding) {
            connection.flushUpstream();
            connection.flushClient();
            connection.pauseClientReads(false);
        }
    }

    /** The client left: what a blackhole held ends (it gave up on it), and what queued is dropped. */
    void clientLeft() {
        Runnable blackholed = afterTheBlackhole;
        afterTheBlackhole = null;
        if (blackholed != null) {
            blackholed.run();
        }
        ByteBuf frame;
        while ((frame = queued.poll()) != null) {
            frame.release();
        }
    }
}
