package io.blackpipe.pipe;

import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.observe.Attempt;
import io.blackpipe.topology.Member;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.function.Consumer;

/**
 * The application commands of one connection that still await their replies, in the order the
 * client sent them. A driver waits for each reply, but a client may pipeline: mongod reads the next
 * request before it answered the one before and answers them in turn. So each reply is matched to
 * its own command, and an answer the proxy gives in the member's place waits until every command
 * sent before it, forwarded to the member, had its reply. Used from the connection's event loop only.
 */
final class AwaitedReplies {
    private static final long NONE = Long.MIN_VALUE; // in a free slot: request ids are ints
    /**
     * Replies to drop kept at most: far more than the sockets' buffers hold on their way (some 60,000 small w:0 writes),
     * so only a member that stopped answering w:0 writes reaches it, which would otherwise grow them for good.
     */
    private static final int MOST_REPLIES_TO_DROP = 1 << 20;
    /** How many w:0 writes a member not known to answer them may be sent before its first answer is recognised. */
    private static final int LAST_ASKED_FOR_NONE = 256;
    private final ArrayDeque<InFlight> commands = new ArrayDeque<>();
    /**
     * Requests whose replies will come and are no client's, oldest first: the proxy's own (see SupersededTransactions)
     * and the w:0 writes of a member that answers them. Every one is answered, so each leaves in turn, however many
     * a client sends before the first reply (a ring of the last 8 lost the ninth's, passed on as the next command's).
     */
    private final ArrayDeque<Integer> repliesToDrop = new ArrayDeque<>();
    /**
     * The ids of the last w:0 writes to a member that should answer none, as a server does: a reply to one is the
     * member's mistake, dropped and said, and the member is then taken to answer every one. None leaves unless
     * answered, hence only the last ones (made at the first: most connections send none).
     */
    private long[] askedForNone;
    private int nextSlot;
    /** The member answered a w:0 write, which a server does not: it is taken to answer every one after it. */
    private boolean memberAnswersUnasked;
    /** The id last given a request of the proxy's own here; they count down from -1 (see {@link #ownRequestId}). */
    private int lastOwnRequestId;

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

    /**
     * A reply held in a blackhole (sent before it began) answers this responseTo: its command, unless a fault met it
     * already, met the blackhole, which is now its fault, and {@code counted} is given its attempt.
     */
    void metTheBlackhole(int responseTo, Consumer<Attempt> counted) {
        InFlight command = answeredBy(responseTo);
        if (command != null && command.attempt != null && command.fault == null) {
            command.fault = DeploymentFaults.BLACKHOLE;
            counted.accept(command.attempt);
        }
    }

    /**
     * A request that asks for no reply (moreToCome: a w:0 write) was forwarded. {@code memberAnswers}: the member
     * answers it all the same (its quirk: it refuses w:0 and takes it as w:1), and its reply is dropped; else a reply to
     * it would be the member's mistake.
     */
    void askedForNoReply(int requestId, boolean memberAnswers) {
        if (memberAnswers || memberAnswersUnasked) {
            keepToDrop(requestId);
        } else {
            if (askedForNone == null) {
                askedForNone = new long[LAST_ASKED_FOR_NONE];
                Arrays.fill(askedForNone, NONE);
            }
            askedForNone[nextSlot] = requestId;
            nextSlot = (nextSlot + 1) % askedForNone.length;
        }
    }

    /**
     * An id for a request the proxy sends the member itself on this connection, just ahead of the client's command
     * {@code clientRequestId}. A reply goes to the command its responseTo names: a driver's request 36 met the proxy's own
     * 36 (its abort ahead of a newer transaction) and got that abort's answer, its own dropped. Drivers count their ids
     * up from 1, or pick them at random, so these count down from -1, and none is one a command here still awaits.
     */
    int ownRequestId(int clientRequestId) {
        int id;
        do {
            id = lastOwnRequestId = lastOwnRequestId == Integer.MIN_VALUE ? -1 : lastOwnRequestId - 1;
        } while (id == clientRequestId || answeredBy(id) != null);
        return id;
    }

    /** The proxy sent a request of its own: its reply is the proxy's, dropped, and no client's. */
    void sentByTheProxy(int requestId) {
        keepToDrop(requestId);
    }

    private void keepToDrop(int requestId) {
        if (repliesToDrop.size() == MOST_REPLIES_TO_DROP) {
            repliesToDrop.pollFirst(); // the oldest, long unanswered
        }
        repliesToDrop.add(requestId);
    }

    /**
     * Drops (releases) a reply to a request that asked for none, which no server sends but jongodb
     * does to every one: passed on, the client would read it as the answer to its next command; and
     * the reply to a request of the proxy's own. The first reply from a member not known to answer
     * w:0 writes is said. False: the reply answers no such request.
     */
    boolean droppedUnasked(ByteBuf reply, Member member, ProxyLog log) {
        int responseTo = Header.responseTo(reply);
        if (!repliesToDrop.isEmpty() && removedToDrop(responseTo)) {
            reply.release();
            return true;
        }
        for (int i = 0; askedForNone != null && i < askedForNone.length; i++) {
            if (askedForNone[i] == responseTo) {
                askedForNone[i] = NONE;
                if (!memberAnswersUnasked) {
                    takeTheRingAsAnswered();
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

    /** The member answers w:0 writes: the ones in the ring still unanswered will be, in the order sent. */
    private void takeTheRingAsAnswered() {
        memberAnswersUnasked = true;
        for (int i = 0; i < askedForNone.length; i++) {
            int slot = (nextSlot + i) % askedForNone.length; // the oldest first
            if (askedForNone[slot] != NONE) {
                keepToDrop((int) askedForNone[slot]);
                askedForNone[slot] = NONE;
            }
        }
    }

    /**
     * Whether a reply to be dropped had this responseTo, removed. Nearly always the oldest (a member answers in turn);
     * the ids are not kept in the order sent (a w:0 write's before the abort the proxy sent ahead of it, the ring's
     * after those kept since), so one answered out of this order is looked for, and none skipped is taken as lost.
     */
    private boolean removedToDrop(int responseTo) {
        if (repliesToDrop.peekFirst() == responseTo) {
            repliesToDrop.pollFirst();
            return true;
        }
        return repliesToDrop.removeFirstOccurrence(responseTo);
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
