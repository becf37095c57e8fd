package io.blackpipe.pipe;

import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.fault.ErrorCodes;
import io.blackpipe.fault.ReplyFate;
import io.blackpipe.fault.RuleSet;
import io.blackpipe.observe.Attempt;
import io.blackpipe.observe.ConnectionObserver;
import io.blackpipe.observe.Outcome;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberState;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.CommandScanner;
import io.blackpipe.wire.CursorIds;
import io.blackpipe.wire.FrameDecoder;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.MalformedMessageException;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;
import java.util.function.Supplier;
import org.bson.BsonDocument;

/**
 * The message logic of one client connection: every request is read once into its facts, counted
 * as an attempt, checked against the rules, and then forwarded or broken; every reply closes the
 * attempt it answers. Runs on the connection's event loop only.
 */
final class Exchange {
    private static final String BLACKHOLE = DeploymentFaults.BLACKHOLE;
    private final ClientConnection connection;
    private final PipeContext context;
    private final Member member;
    private final HelloPath hellos;
    private final ConnectionObserver observer;
    private final Supplier<MemberState> memberState;
    private final String advertisedMember;
    private final CommandScanner scanner = new CommandScanner();
    private final CutCommands cut;
    private final RequestDocument request = new RequestDocument();
    private final WaitingRequests waiting;
    private final WaitingReplies replies;
    private final AwaitedReplies awaited = new AwaitedReplies();
    private final RunsAtTheMember runs;
    private final DuplicateKeyBatches batches;
    private final Runnable wakeWhenItsTurnMayHaveCome;
    /** What this connection's writes to a simulated primary change, for a failover's rollback; null on a real deployment. */
    private final RollbackRecorder rollbacks;

    Exchange(ClientConnection connection, PipeContext context, Member member, ConnectionObserver observer) {
        this.connection = connection;
        this.context = context;
        this.member = member;
        this.observer = observer;
        this.memberState = () -> context.memberStates().of(member.upstream());
        this.hellos = new HelloPath(this, observer, memberState, request, awaited);
        this.advertisedMember = member.advertised().toString();
        this.cut = new CutCommands(connection, scanner, observer, context);
        this.waiting = new WaitingRequests(connection, this::onRequest, frame -> cut.count(frame, connection.cutBy()));
        this.replies = new WaitingReplies(connection, this::deliver);
        this.runs = new RunsAtTheMember(context.retriedWrites(), context.commits(), connection);
        this.batches = new DuplicateKeyBatches(this, member, context);
        this.wakeWhenItsTurnMayHaveCome = () -> connection.runOnItsEventLoop(waiting::itsTurnMayHaveCome); // one: forward is hot
        this.rollbacks = context.simulation() == null ? null : new RollbackRecorder(this);
    }

    void onRequest(ByteBuf frame) {
        if (waiting.queueBehindTheHeld(frame)) {
            return;
        }
        try {
            process(frame);
        } catch (RuntimeException e) {
            frame.release();
            throw e;
        }
    }

    private void process(ByteBuf frame) {
        if (connection.memberDown() && !connection.blackholed()) { // an outage (or a restart's exit) began: nothing more reaches it
            String fault = connection.listener().downBy();
            connection.cutBy(fault); // its end may come later: all the close ends is the outage's
            cut.count(frame, fault);
            frame.release();
            connection.closeClient(true);
            return;
        }
        if (connection.closing()) { // read in the same batch as the request that closed the connection
            cut.count(frame, null);
            frame.release();
            return;
        }
        switch (Header.opCode(frame)) {
            case OpCode.OP_MSG: {
                OpMsg msg = OpMsg.parse(frame);
                CommandFacts facts = scanner.ofOpMsg(frame, msg);
                if (facts.isHello()) {
                    observer.monitoring(facts);
                    waiting.afterAnyBlackhole(frame, () -> hellos.unlessFaulted(frame, facts, msg, null));
                } else if (FailPointCommand.answeredByTheProxy(frame, msg, facts.name(), context)) {
                    FailPointCommand.answer(this, frame, msg, facts);
                } else {
                    long fingerprint = facts.fingerprint();
                    Attempt attempt = observer.begin(facts, fingerprint);
                    if (connection.blackholed()) {
                        observer.faultInjected(attempt, BLACKHOLE);
                        waiting.holdThroughTheBlackhole(frame, () -> forward(frame, attempt, fingerprint, BLACKHOLE, null),
                                () -> abandon(attempt, fingerprint, BLACKHOLE, false));
                    } else {
                        decide(frame, msg, attempt, fingerprint);
                    }
                }
                return;
            }
            case OpCode.OP_QUERY:
                hellos.onOpQuery(frame, waiting);
                return;
            case OpCode.OP_COMPRESSED:
                waiting.afterAnyBlackhole(frame, () -> connection.sendUpstream(frame)); // never negotiated here: as is
                return;
            case OpCode.OP_UPDATE, OpCode.OP_INSERT, OpCode.OP_GET_MORE, OpCode.OP_DELETE, OpCode.OP_KILL_CURSORS:
                // a legacy driver's (PyMongo 3's raw batches and their getMores): the member judges it, as without the proxy
                waiting.afterAnyBlackhole(frame, () -> LegacyOpcodes.forward(frame, null, connection, replies));
                return;
            default:
                throw new MalformedMessageException("clients do not send " + OpCode.name(Header.opCode(frame)));
        }
    }

    private void decide(ByteBuf frame, OpMsg msg, Attempt attempt, long fingerprint) {
        RuleSet.Decision decision = context.rules().decide(attempt, memberState, advertisedMember, request.of(frame, msg, null));
        request.clear();
        if (decision == null) {
            forward(frame, attempt, fingerprint, null, null);
            return;
        }
        String fault = decision.action().injects() ? decision.action().name() : null; // null: it fired, nothing broke
        if (fault != null) {
            observer.faultInjected(attempt, fault);
        }
        decision.action().apply(new InterceptedCommand(this, frame, attempt, fingerprint, fault));
    }

    void forward(ByteBuf frame, Attempt attempt, long fingerprint, String fault, ReplyFate fate) {
        SimulatedSecondary.Verdict verdict = asThisMemberTakesIt(frame, attempt.facts(), wakeWhenItsTurnMayHaveCome);
        if (verdict.waits()) { // then asks again
            waiting.holdUntilItsTurn(frame, () -> forward(frame, attempt, fingerprint, fault, fate), () -> {
                context.commits().gaveUp(wakeWhenItsTurnMayHaveCome);
                abandon(attempt, fingerprint, fault, false);
            });
            return;
        }
        if (verdict.ranBefore() || verdict.answer() != null && fate != null && !attempt.facts().moreToCome()) {
            frame.release(); // a run's answer, or the member's own refusal under a rule's reply fate: met as its reply would be
            awaited.add(new InFlight(attempt, fingerprint, fault, fate, verdict.ranBefore())); // see InFlight#forwarded
            deliver(Messages.opMsg(connection.alloc(), context.nextRequestId(), attempt.facts().requestId(), 0, verdict.answer()));
            connection.flushClient(); // no read from the member ends with a flush here
            return;
        }
        if (verdict.answer() != null) {
            frame.release();
            answer(attempt, fingerprint, fault, verdict.answer());
            return;
        }
        ByteBuf forwarded = verdict.frame();
        InFlight command = null;
        if (attempt.facts().moreToCome()) {
            observer.complete(attempt, fingerprint, Outcome.NO_REPLY, fault, 0, false, false);
            awaited.askedForNoReply(attempt.facts().requestId(), context.memberStates().quirks(member.upstream()).refusesUnacknowledged());
        } else {
            command = new InFlight(attempt, fingerprint, fault, fate, true).withReplyInstead(verdict.replyInstead())
                    .withDuplicateKeysAsMongod(DuplicateKeys.oneStatementWrite(forwarded, attempt.facts(), context.memberStates(),
                            member.upstream()));
            awaited.add(command);
        }
        if (rollbacks != null) {
            rollbacks.forwarding(forwarded, attempt.facts(), command, awaited);
        }
        context.superseded().abortFirst(attempt.facts(), member.upstream(), connection, awaited);
        batches.forwarding(forwarded, attempt.facts());
        connection.sendUpstream(forwarded);
        runs.sent(attempt.facts(), verdict);
    }

    /** What this member does with a command (see {@link RequestRewrites#asThisMemberTakesIt}). */
    SimulatedSecondary.Verdict asThisMemberTakesIt(ByteBuf frame, CommandFacts facts, Runnable wakeWhenItsTurnMayHaveCome) {
        return RequestRewrites.asThisMemberTakesIt(frame, facts, context, member, memberState(), hellos.clientSaidHelloOk(), connection.alloc(),
                wakeWhenItsTurnMayHaveCome);
    }

    /** A synthesized answer: the command never reached the server. */
    void answer(Attempt attempt, long fingerprint, String fault, BsonDocument reply) {
        ByteBuf frame = Messages.opMsg(connection.alloc(), context.nextRequestId(), attempt.facts().requestId(), 0, reply);
        // read as the member's own reply would be: a canned one may carry writeErrors or a writeConcernError
        ReplyFacts facts = ReplyFacts.of(frame);
        if (attempt.facts().moreToCome()) {
            frame.release(); // before anything that may throw: there is no one to send it to
            observer.completeAnswered(attempt, fingerprint, facts, fault);
            // a w:0 (moreToCome) request gets no reply: one now would answer the client's next request;
            // refused as "not primary", mongod closes the connection so the driver selects a server again
            if (!facts.ok() && ErrorCodes.NOT_PRIMARY.contains(facts.code())) {
                connection.closeClient(false);
            }
            return;
        }
        if (!cut.endedUnheard(attempt, fingerprint, fault, frame)) {
            observer.completeAnswered(attempt, fingerprint, facts, fault);
            answerInTurn(frame);
        }
    }

    /** Sends the proxy's answer where mongod's would go: after the replies (the member's, the proxy's) to earlier requests. */
    void answerInTurn(ByteBuf answer) {
        if (!awaited.answerInTurn(answer)) {
            replies.sendInTurn(answer);
        }
    }

    /** The command was dropped and the connection is going away ({@code byItsRule}: its rule's close or reset). */
    void abandon(Attempt attempt, long fingerprint, String fault, boolean byItsRule) {
        cut.ended(attempt, fingerprint, fault, false, byItsRule);
    }

    /**
     * The command was swallowed; it ends when the client gives up and the connection closes, and
     * nothing the client sends after it is taken, as behind a mongod stuck on it.
     */
    void hang(Attempt attempt, long fingerprint, String fault) {
        if (attempt.facts().moreToCome()) {
            // nobody waits for a w:0 request, so nothing would end it later
            observer.complete(attempt, fingerprint, Outcome.NO_REPLY, fault, 0, false, false);
            return;
        }
        awaited.add(new InFlight(attempt, fingerprint, fault, null, false));
        waiting.holdOpenEnded();
    }

    /** The member's blackhole ended: what waited in it, requests and replies, goes on in order. */
    void blackholeEnded() {
        waiting.blackholeEnded();
        replies.blackholeEnded();
        hellos.blackholeEnded();
        connection.flushClient();
    }

    WaitingRequests requests() {
        return waiting;
    }

    WaitingReplies replies() {
        return replies;
    }

    /** The batch inserts this connection sent to a member that applies none of one that meets a duplicate key. */
    DuplicateKeyBatches batches() {
        return batches;
    }

    /** What this connection sent to the member that others wait on (see {@link RunsAtTheMember}). */
    RunsAtTheMember runs() {
        return runs;
    }

    void onReply(ByteBuf frame) {
        if (batches.heldForARerun(frame)) {
            return; // it comes again (ClientConnection#passOn) as mongod's answer, and ends its run then
        }
        if (!runs.isEmpty()) { // a run ends as its reply comes, before a blackhole or a fate holds it
            runs.onReply(Header.responseTo(frame), frame);
        }
        if (!replies.queue(frame)) {
            deliver(frame);
        } else if (connection.blackholed()) { // on its way as the blackhole began: its command met the blackhole
            awaited.metTheBlackhole(Header.responseTo(frame), attempt -> observer.faultInjected(attempt, BLACKHOLE));
        }
    }

    private void deliver(ByteBuf frame) {
        InFlight current = awaited.answeredBy(Header.responseTo(frame));
        if (current == null && (awaited.droppedUnasked(frame, member, context.log())
                || rollbacks != null && rollbacks.took(frame))) {
            return;
        }
        if (current == null || current.isHello()) { // a stream's next replies answer no request
            hellos.onReply(frame);
            if (current != null) {
                awaited.remove(current);
                replies.sendBeforeTheQueued(awaited.dueAnswers());
            }
            return;
        }
        frame = current.asTheClientGetsIt(connection.alloc(), frame);
        ReplyFacts reply = ReplyFacts.of(frame);
        if (current.attempt.facts().changeStream() && !reply.isError()) {
            context.changeStreams().opened(member.upstream(), CursorIds.ofReply(frame));
        }
        if (reply.moreToCome()) {
            current.awaitedResponseTo = Header.requestId(frame); // the next streamed reply answers this one
        } else {
            awaited.remove(current);
        }
        ByteBuf said = ReplyRewrites.asThisMemberWouldSay(frame, reply, current.attempt.facts(), context, member, connection.alloc());
        reply = said == frame ? reply : ReplyFacts.of(said); // counted as the client gets it (a simulated member answers for the node)
        frame = said;
        if (rollbacks != null) {
            rollbacks.replied(current, frame);
        }
        if (current.fate == null || current.fateDecided) {
            CountedReply.send(this, current, reply, frame);
        } else {
            current.fateDecided = true; // a fault's reply fate applies to the first reply of a stream
            current.fate.decide(new UpstreamReply(this, frame, current, reply));
        }
        replies.sendBeforeTheQueued(awaited.dueAnswers()); // the proxy's answers to pipelined commands whose turn came
    }

    void completeIfLast(InFlight current, ReplyFacts reply) {
        if (!reply.moreToCome()) {
            observer.complete(current.attempt, current.fingerprint, reply, current.fault, current.forwarded);
            context.superseded().answered(current.attempt.facts(), reply);
            if (rollbacks != null) {
                rollbacks.acknowledged(current, reply);
            }
        }
    }

    void completeAsNetworkError(InFlight current) {
        // a stream (exhaust getMore) cut at its first reply is still awaited: it ends here, not again at the close
        awaited.remove(current);
        cut.ended(current.attempt, current.fingerprint, current.fault, current.forwarded, false);
    }

    /**
     * The connection closed: a command still waiting for its reply ended in a network error, and so did
     * those the client sent behind a held or swallowed one, in the order they were sent.
     */
    void onClosed() {
        replies.clientLeft();
        for (InFlight current : awaited.clear()) {
            cut.endedAwaitingTheMember(current.attempt, current.fingerprint, current.fault, current.forwarded);
        }
        waiting.clientLeft();
    }

    /** {@code client} closed in the middle of a message: said, and the command it began with counted as the driver saw it. */
    void cutWhileItCame(FrameDecoder.TruncatedFrame truncated, String client) {
        context.log().info(client + " closed in the middle of a message (" + truncated.describe() + ")");
        cut.countWhatCame(truncated.commandHead(), connection.cutBy()); // a large insert a reset cut on its way, say
    }

    ClientConnection connection() {
        return connection;
    }

    /** What the member last said about itself. */
    MemberState memberState() {
        return memberState.get();
    }

    HelloPath hellos() {
        return hellos;
    }

    /**
     * The awaitable hello the member holds is answered now (see {@link HelloPath#answerAwaiting}); the proxy's answers
     * pipelined behind that hello go with it.
     */
    void answerAwaitingHello(BsonDocument error) {
        if (hellos.answerAwaiting(error)) {
            replies.sendBeforeTheQueued(awaited.dueAnswers());
            connection.flushClient();
        }
    }

    /** The member exits (a restart): see {@link CutCommands#interruptAtShutdown}; a command a rule blocks sees it too. */
    void interruptAtShutdown(BsonDocument topologyVersion) {
        cut.interruptAtShutdown(awaited.clear(), topologyVersion, memberState(), replies::sendInTurn);
        waiting.endTimedHoldNow();
        connection.flushClient();
    }

    /** True when the member exited while a rule blocked {@code attempt}, now answered (see {@link CutCommands#interruptBlocked}). */
    boolean interruptedAtShutdown(Attempt attempt, long fingerprint) {
        if (cut.exitedWith() == null) {
            return false;
        }
        cut.interruptBlocked(attempt, fingerprint, memberState(), replies::sendInTurn);
        return true;
    }

    PipeContext context() {
        return context;
    }

    Member member() {
        return member;
    }
}
