package io.blackpipe.pipe;

import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.List;
import java.util.function.Consumer;

/**
 * The replies of one connection that wait their turn: behind a held one (delayReplyMS, or
 * trickleReply until its last piece; an exhaust stream's replies each answer the one before, so
 * none may overtake it), behind a turn kept for a reply the proxy makes again (a batch insert's
 * answer, see DuplicateKeyBatches) and in a blackhole (a reply on its way arrives when it ends, as
 * over a healed network). Once some wait, every reply read later waits behind them. Used from the
 * connection's event loop only.
 */
final class WaitingReplies {
    private final ClientConnection connection;
    private final Consumer<ByteBuf> deliver;
    private final ArrayDeque<Turn> queued = new ArrayDeque<>();
    private boolean holding;
    /** A delayed reply whose time came during a blackhole, sent when it ends (or told the client left). */
    private Runnable delayedAfterTheBlackhole;
    private boolean clientLeft;

    /** @param deliver passes a reply on to the client, in turn */
    WaitingReplies(ClientConnection connection, Consumer<ByteBuf> deliver) {
        this.connection = connection;
        this.deliver = deliver;
    }

    /** True, with the reply queued, while replies wait. */
    boolean queue(ByteBuf frame) {
        if (!holding && !connection.blackholed() && queued.isEmpty()) {
            return false;
        }
        queued.add(new Turn(frame, false));
        return true;
    }

    /** An answer the proxy gave in the member's place: sent now, or after the replies that wait (a held one first). */
    void sendInTurn(ByteBuf answer) {
        if (!holding && queued.isEmpty()) { // a blackhole holds none of the proxy's own answers back, only what crosses it
            connection.sendToClient(answer);
            connection.flushClient();
        } else {
            queued.add(new Turn(answer, true));
        }
    }

    /**
     * Replies whose turn came with the one just handled (the proxy's answers to pipelined commands): sent now,
     * or, while replies wait, before every one queued now (those answer later commands).
     */
    void sendBeforeTheQueued(List<ByteBuf> frames) {
        if (!holding && !connection.blackholed() && queued.isEmpty()) {
            frames.forEach(connection::sendToClient);
            return;
        }
        for (int i = frames.size() - 1; i >= 0; i--) {
            queued.addFirst(new Turn(frames.get(i), true));
        }
    }

    /**
     * Keeps the turn of a reply that comes again later (a batch insert's answer, made again): the replies read after it
     * wait for it. Once the client left, no turn is kept (the reply goes to its run, see AfterTheClientLeft).
     */
    Turn keepTurn() {
        Turn turn = new Turn(null, false);
        if (clientLeft) {
            turn.dropped = true;
        } else {
            queued.add(turn);
        }
        return turn;
    }

    /** The reply whose turn was kept: it goes on (read and rewritten) when that turn comes, and the ones behind it after it. */
    void fillTurn(Turn turn, ByteBuf frame) {
        turn.frame = frame;
        release();
    }

    /** A reply is held (delayReplyMS, trickleReply): the ones read after it wait; false lets them go on. */
    void hold(boolean holding) {
        this.holding = holding;
        release();
    }

    /** See {@link #delayedAfterTheBlackhole}. */
    void sendAfterTheBlackhole(Runnable send) {
        delayedAfterTheBlackhole = send;
    }

    void blackholeEnded() {
        runDelayed(); // it goes before the replies read after it
        release();
    }

    private void release() {
        while (!holding && !connection.blackholed() && !queued.isEmpty() && queued.peek().frame != null && connection.isOpen()) {
            Turn next = queued.poll();
            ByteBuf frame = next.frame;
            if (next.ownAnswer) {
                connection.sendToClient(frame); // made by the proxy: nothing in it to read or rewrite
                continue;
            }
            try {
                deliver.accept(frame);
            } catch (RuntimeException e) {
                if (frame.refCnt() > 0) {
                    frame.release(); // off the queue: nothing else would release it
                }
                throw e;
            }
        }
    }

    private void runDelayed() {
        Runnable delayed = delayedAfterTheBlackhole;
        delayedAfterTheBlackhole = null;
        if (delayed != null) {
            delayed.run();
        }
    }

    /** The member's replies that wait are dropped (it fell behind a blackhole): the proxy's own answers keep their turn. */
    void dropTheMembers() {
        queued.removeIf(turn -> {
            boolean members = turn.frame != null && !turn.ownAnswer;
            if (members) {
                turn.frame.release();
            }
            return members;
        });
    }

    /** The client left: a delayed reply learns it, the queued ones are dropped. */
    void clientLeft() {
        clientLeft = true;
        runDelayed();
        Turn turn;
        while ((turn = queued.poll()) != null) {
            if (turn.frame == null) {
                turn.dropped = true; // a kept turn: its reply, when it comes, goes to its run instead
            } else {
                turn.frame.release();
            }
        }
    }

    /**
     * A reply's turn: the member's reply (read and rewritten when its turn comes), the proxy's own answer (sent as it is),
     * or a kept turn ({@link #keepTurn}) whose reply is not in yet, and the replies behind it wait.
     */
    static final class Turn {
        private ByteBuf frame;
        private final boolean ownAnswer;
        private boolean dropped;

        private Turn(ByteBuf frame, boolean ownAnswer) {
            this.frame = frame;
            this.ownAnswer = ownAnswer;
        }

        /** Whether the client left before a kept turn's reply came: it goes to its run instead. */
        boolean dropped() {
            return dropped;
        }
    }
}
