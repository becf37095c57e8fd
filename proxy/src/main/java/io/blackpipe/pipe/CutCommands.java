package io.blackpipe.pipe;

import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.fault.ErrorCodes;
import io.blackpipe.fault.ErrorReplies;
import io.blackpipe.observe.Attempt;
import io.blackpipe.observe.ConnectionObserver;
import io.blackpipe.observe.Outcome;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.topology.MemberState;
import io.blackpipe.wire.CommandScanner;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.MalformedMessageException;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.function.Consumer;
import org.bson.BsonDocument;

/**
 * Application commands a connection's close ended: those waiting for a reply or held (or, as a member exits for its
 * restart, answered InterruptedAtShutdown first), and those that
 * reached the proxy as their connection was going away (its member went down before the outage reset
 * it, an earlier request closed it, or they waited behind a held one). Each of the latter was sent all
 * the same, so it is an attempt, ended by the close, and the driver's retry counts as the retry it
 * is. Used from the connection's event loop only.
 */
final class CutCommands {
    /** The topologyVersion the member exited with (a restart), for a command a rule still blocks; null until then. */
    private BsonDocument exitedWith;
    private final ClientConnection connection;
    private final CommandScanner scanner;
    private final ConnectionObserver observer;
    private final PipeContext context;

    CutCommands(ClientConnection connection, CommandScanner scanner, ConnectionObserver observer, PipeContext context) {
        this.connection = connection;
        this.scanner = scanner;
        this.observer = observer;
        this.context = context;
    }

    /**
     * A command the close ended ({@code forwarded}: the member had it), labelled as {@link #endedBy} says: in a network
     * error, unless it asked for no reply (a w:0 write), which nobody can know about, as {@link #count} has it too;
     * {@code byItsRule}: its rule's reset or close broke the connection under it, a network error for a w:0 write too.
     */
    void ended(Attempt attempt, long fingerprint, String fault, boolean forwarded, boolean byItsRule) {
        Outcome outcome = attempt.facts().moreToCome() && !byItsRule ? Outcome.NO_REPLY : Outcome.NETWORK_ERROR;
        observer.complete(attempt, fingerprint, outcome, endedBy(attempt, fault), 0, false, forwarded);
    }

    /**
     * Whether the client closed behind its request (its FIN held on a slow link, see {@link CountedReply}): then the
     * proxy's {@code answer} is dropped, and its command ended as the client saw it, in a network error.
     */
    boolean endedUnheard(Attempt attempt, long fingerprint, String fault, ByteBuf answer) {
        if (!connection.link().clientClosed()) {
            return false;
        }
        answer.release();
        ended(attempt, fingerprint, fault, false, false);
        return true;
    }

    /**
     * A command still awaiting its member's reply when its connection closed, as {@link #ended}; one at the member (and
     * met by no fault) that its client gave up on while the member was blackholed is the blackhole's: no reply could
     * have reached the client. (A reply that had come, and was lost on its way over a slow link, is not.)
     */
    void endedAwaitingTheMember(Attempt attempt, long fingerprint, String fault, boolean forwarded) {
        if (fault == null && forwarded && connection.cutBy() == null && connection.blackholed()) {
            observer.faultInjected(attempt, DeploymentFaults.BLACKHOLE);
            fault = DeploymentFaults.BLACKHOLE;
        }
        ended(attempt, fingerprint, fault, forwarded, false);
    }

    /**
     * The label of a command its connection's close ended: the deployment fault that cut the connection
     * (counted here; a rule's delay, block or hang still open did not end it), else its own {@code fault}.
     */
    private String endedBy(Attempt attempt, String fault) {
        String cut = connection.cutBy();
        if (cut == null) {
            return fault;
        }
        observer.faultInjected(attempt, cut);
        return cut;
    }

    /**
     * The member exits (a restart): as mongod interrupts the operations still running when it shuts down, each of
     * {@code awaiting} (the commands that awaited its reply, in order) is answered InterruptedAtShutdown with {@code
     * topologyVersion} through {@code send}, the restart's fault.
     */
    void interruptAtShutdown(List<InFlight> awaiting, BsonDocument topologyVersion, MemberState member, Consumer<ByteBuf> send) {
        exitedWith = topologyVersion;
        for (InFlight command : awaiting) {
            observer.faultInjected(command.attempt, DeploymentFaults.RESTART);
            BsonDocument error = ErrorReplies.error(ErrorCodes.INTERRUPTED_AT_SHUTDOWN, null, null, topologyVersion,
                    command.attempt.facts(), member);
            ByteBuf reply = Messages.opMsg(connection.alloc(), context.nextRequestId(), command.awaitedResponseTo, 0, error);
            observer.completeAnswered(command.attempt, command.fingerprint, ReplyFacts.of(reply), DeploymentFaults.RESTART);
            send.accept(reply);
        }
    }

    /** The topologyVersion the member exited with (a restart); null until it did. */
    BsonDocument exitedWith() {
        return exitedWith;
    }

    /**
     * The member exited while a rule blocked {@code attempt}: it is answered InterruptedAtShutdown, as mongod interrupts its
     * failpoint's sleep at shutdown (a request that asks for no reply is cut).
     */
    void interruptBlocked(Attempt attempt, long fingerprint, MemberState member, Consumer<ByteBuf> send) {
        if (attempt.facts().moreToCome()) {
            ended(attempt, fingerprint, DeploymentFaults.RESTART, false, false);
            return;
        }
        interruptAtShutdown(List.of(new InFlight(attempt, fingerprint, null, null, false)), exitedWith, member, send);
    }

    /**
     * Counts the command a message cut while it came began with ({@code head}: its header, flags and body as a message of
     * its own; null: it did not come whole), as {@link #count} does: the driver sent it, and sees it fail.
     */
    void countWhatCame(byte[] head, String fault) {
        if (head == null) {
            return;
        }
        try {
            count(Unpooled.wrappedBuffer(head), fault);
        } catch (MalformedMessageException e) {
            // it would have closed the connection, had it come whole: no command to count
        }
    }

    /** Counts the command in {@code frame}, ended by the close ({@code fault}: the deployment fault that cut it, or null). */
    void count(ByteBuf frame, String fault) {
        if (Header.opCode(frame) != OpCode.OP_MSG) {
            return;
        }
        OpMsg msg = OpMsg.parse(frame);
        CommandFacts facts = scanner.ofOpMsg(frame, msg);
        if (facts.isHello() || FailPointCommand.answeredByTheProxy(frame, msg, facts.name(), context)) {
            return; // not application commands: never counted as attempts
        }
        Attempt attempt = observer.begin(facts, facts.fingerprint());
        if (fault != null) {
            observer.faultInjected(attempt, fault);
        }
        observer.complete(attempt, facts.fingerprint(), facts.moreToCome() ? Outcome.NO_REPLY : Outcome.NETWORK_ERROR,
                fault, 0, false, false);
    }
}
