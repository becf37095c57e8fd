package io.blackpipe.pipe;

import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberStates;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The application commands of one connection that still await their replies, in the order the
 * client sent them. A driver waits for each reply, but a client may pipeline: mongod reads the next
 * request before it answered the one before and answers them in turn. So each reply is matched to
 * its own command, and an answer the proxy gives in the member's place waits until every command
 * sent before it, forwarded to the member, had its reply. Used from the connection's event loop only.
 */
final class AwaitedReplies {
    private static final long NONE = Long.MIN_VALUE; // in a free slot: request ids are ints
    private final ArrayDeque<InFlight> commands = new ArrayDeque<>();
    /** The ids of the last requests forwarded that asked for no reply (moreToCome: w:0 writes). */
    private final long[] askedForNone = {NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE};
    /** Whether the request in that slot was the proxy's own, whose reply is expected (see SupersededTransactions). */
    private final boolean[] sentByTheProxy = new boolean[askedForNone.length];
    private int nextSlot;
    private boolean unaskedReplySaid;

    void add(InFlight command) {
        commands.add(command);
    }

    /** The command a member's reply with this responseTo answers (its request, or its stream's last reply), or null. */
    InFlight answeredBy(int responseTo) {
        InFlight first = commands.peekFirst(); // nearly always the one (a driver sends one command at a time)
        if (first == null || first.answer == null && first.awaitedResponseTo == responseTo) {
            return first;
        }
        for (InFlight command : commands) {
            if (command.answer == null && command.awaitedResponseTo == responseTo) {
                return command;
            }
        }
        return null;
    }

    /** A request that asks for no reply (moreToCome) was forwarded: a reply to it would be the member's mistake. */
    void askedForNoReply(int requestId) {
        remember(requestId, false);
    }

    /** The proxy sent a request of its own: its reply is the proxy's, dropped, and no client's. */
    void sentByTheProxy(int requestId) {
        remember(requestId, true);
    }

    private void remember(int requestId, boolean proxys) {
        askedForNone[nextSlot] = requestId;
        sentByTheProxy[nextSlot] = proxys;
        nextSlot = (nextSlot + 1) % askedForNone.length;
    }

    /**
     * Drops (releases) a reply to a request that asked for none, which no server sends but jongodb
     * does to every one: passed on, the client would read it as the answer to its next command; and
     * the reply to a request of the proxy's own. The first of the former on a connection is said,
     * unless the member's quirks said so at start (it refuses w:0, and gets w:1: see QuirkRewrites).
     * False: the reply answers no such request.
     */
    boolean droppedUnasked(ByteBuf reply, Member member, MemberStates states, ProxyLog log) {
        int responseTo = Header.responseTo(reply);
        for (int i = 0; i < askedForNone.length; i++) {
            if (askedForNone[i] == responseTo) {
                askedForNone[i] = NONE;
                if (!sentByTheProxy[i] && !unaskedReplySaid && !states.quirks(member.upstream()).refusesUnacknowledged()) {
                    unaskedReplySaid = true;
                    ReplyFacts facts = ReplyFacts.of(reply);
                    log.warn("member " + member.upstream() + " answered a request that asked for no reply (moreToCome: a w:0"
                            + " write), which a server never does: its reply (" + (facts.ok() ? "ok: 1" : "ok: 0, code " + facts.code())
                            + ") and any more on this connection are dropped, as the client would read one as the answer to"
                            + " its next command");
                }
                reply.release();
                return true;
            }
        }
        return false;
    }

    /** A hello forwarded to the member: the proxy's answers sent after it wait for its reply. */
    void addHello(int requestId) {
        commands.add(InFlight.forwardedHello(requestId));
    }

    /**
     * A reply with this responseTo (the member's, or one the proxy gave early in its place) answered a
     * forwarded hello: true when it did (it is removed; answers behind it may be due).
     */
    boolean helloAnswered(int responseTo) {
        InFlight hello = answeredBy(responseTo);
        if (hello == null || !hello.isHello()) {
            return false;
        }
        commands.remove(hello);
        return true;
    }

    void remove(InFlight command) {
        commands.remove(command);
    }

    /**
     * Keeps {@code answer}, one the proxy made in the member's place (to an application command, a
     * failpoint command or a hello), for {@link #dueAnswers} while a command forwarded before it still
     * waits for the member's reply; false: send it now.
     */
    boolean answerInTurn(ByteBuf answer) {
        for (InFlight before : commands) {
            if (before.forwarded && before.answer == null) {
                commands.add(InFlight.answerInWaiting(answer));
                return true;
            }
        }
        return false;
    }

    /**
     * The proxy's answers no forwarded command sent before them waits for any more, removed, in order.
     * A swallowed command (hang) never gets a reply, from mongod either: it holds nothing up here.
     */
    List<ByteBuf> dueAnswers() {
        if (commands.isEmpty()) {
            return List.of();
        }
        List<ByteBuf> due = null;
        for (Iterator<InFlight> it = commands.iterator(); it.hasNext(); ) {
            InFlight command = it.next();
            if (command.answer != null) {
                if (due == null) {
                    due = new ArrayList<>(2);
                }
                due.add(command.answer);
                it.remove();
            } else if (command.forwarded) {
                break;
            }
        }
        return due == null ? List.of() : due;
    }

    /**
     * The connection closed: the commands that still awaited a reply, removed; the caller ends each (an
     * answer's buffer is released here, a hello is nobody's attempt).
     */
    List<InFlight> clear() {
        List<InFlight> left = new ArrayList<>(commands.size());
        for (InFlight command : commands) {
            if (command.answer != null) {
                command.answer.release();
            } else if (!command.isHello()) {
                left.add(command);
            }
        }
        commands.clear();
        return left;
    }
}
