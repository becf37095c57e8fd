package io.blackpipe.pipe;

import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.fault.RuleSet;
import io.blackpipe.observe.Attempt;
import io.blackpipe.observe.ConnectionObserver;
import io.blackpipe.topology.HelloExchange;
import io.blackpipe.topology.MemberState;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.OpQuery;
import io.netty.buffer.ByteBuf;
import java.util.function.Supplier;
import org.bson.BsonDocument;

/**
 * The hellos of one client connection (handshakes and heartbeats, OP_MSG or OP_QUERY): a quiescing member's
 * answer, the rules on hello, the stand-in that answers a stream in the member's place, and the member's
 * replies rewritten. It shares with {@link Exchange} the replies awaited, so the proxy's answers keep their turn.
 * Runs on the connection's event loop only.
 */
final class HelloPath {
    private final Exchange exchange;
    private final ClientConnection connection;
    private final PipeContext context;
    private final ConnectionObserver observer;
    private final Supplier<MemberState> memberState;
    private final String advertisedMember;
    private final RequestDocument request;
    private final AwaitedReplies awaited;
    private final HelloExchange hellos;
    private final HelloStandIn standIn;
    private final ClientHelloOk helloOk = new ClientHelloOk();
    /** The hello the client streams (exhaustAllowed) on this connection, or null: each later reply of it is a check. */
    private CommandFacts streamed;

    HelloPath(Exchange exchange, ConnectionObserver observer, Supplier<MemberState> memberState, RequestDocument request,
              AwaitedReplies awaited) {
        this.exchange = exchange;
        this.connection = exchange.connection();
        this.context = exchange.context();
        this.observer = observer;
        this.memberState = memberState;
        this.advertisedMember = exchange.member().advertised().toString();
        this.request = request;
        this.awaited = awaited;
        this.hellos = new HelloExchange(context.rewriter(), context.memberStates(), exchange.member().upstream(), context.simulation());
        this.standIn = new HelloStandIn(connection, hellos, context, this::faultedCheck);
    }

    /**
     * A hello goes on to the member with its reply rewritten, unless a rule names it: then the fault decides,
     * as the server's failCommand does for hello and isMaster. It is never counted as an application command.
     *
     * @param msg the OP_MSG view of {@code frame}, or null for an OP_QUERY handshake ({@code query})
     */
    void unlessFaulted(ByteBuf frame, CommandFacts facts, OpMsg msg, OpQuery query) {
        Attempt hello = observer.helloForRules(facts);
        Quiesce quiesce = connection.listener().quiesce();
        if (quiesce != null) { // shutting down: no hello of it says it is up, whatever a rule says
            observer.faultInjected(hello, DeploymentFaults.RESTART);
            new InterceptedHello(exchange, frame, facts, msg, query).answer(quiesce.helloError());
            return;
        }
        RuleSet.Decision decision = context.rules().decide(hello, memberState, advertisedMember, request.of(frame, msg, query));
        request.clear();
        if (decision == null) {
            forward(frame, facts, msg, query);
            return;
        }
        if (decision.action().injects()) {
            observer.faultInjected(hello, decision.action().name());
        }
        decision.action().apply(new InterceptedHello(exchange, frame, facts, msg, query));
    }

    /** The hello goes on to the member, or the stand-in answers it (a stream the member does not run). */
    void forward(ByteBuf frame, CommandFacts facts, OpMsg msg, OpQuery query) {
        helloOk.onHello(frame, msg, query);
        if (msg != null && facts.exhaustAllowed()) {
            streamed = facts;
        }
        if (!standIn.tookOver(frame, facts, msg)) {
            if (!facts.moreToCome()) {
                awaited.addHello(facts.requestId());
            }
            connection.sendUpstream(hellos.onRequest(connection.alloc(), frame, facts, msg, query));
        }
    }

    /**
     * An OP_QUERY, after any blackhole: a hello (a handshake that starts so) as an OP_MSG one, or one that is no hello (a
     * command, or PyMongo 3's legacy find), which passes as it came, rewritten as hellos' are.
     */
    void onOpQuery(ByteBuf frame, WaitingRequests waiting) {
        OpQuery query = OpQuery.parse(frame);
        CommandFacts facts = CommandFacts.ofOpQuery(frame, query);
        if (facts.isHello()) {
            observer.monitoring(facts);
        }
        waiting.afterAnyBlackhole(frame, () -> {
            if (facts.isHello()) {
                unlessFaulted(frame, facts, null, query);
            } else {
                LegacyOpcodes.forward(hellos.onRequest(connection.alloc(), frame, facts, null, query), facts.name(), connection,
                        exchange.replies());
            }
        });
    }

    /**
     * A reply to a hello, or the next of a stream the member runs: it goes to the client rewritten. A stream's reply
     * after its first is a check of its own (mongod runs the hello again for each), which a rule on hello may fail as
     * the server's failpoint does (one that looks into the hello, commandMatches, reads the streamed hello as sent).
     */
    void onReply(ByteBuf frame) {
        if (streamed != null && hellos.isStreamedCheck(frame) && faultedCheck(() -> standIn.onReply(frame), frame)) {
            return;
        }
        standIn.onReply(frame);
    }

    /**
     * Whether a rule on hello took the stream's next check (the member's reply, or null for the next the proxy makes):
     * then {@code goOn} runs if the rule lets the check through, at once or after a block.
     */
    private boolean faultedCheck(Runnable goOn, ByteBuf membersReply) {
        if (streamed == null) {
            return false;
        }
        Attempt check = observer.helloForRules(streamed);
        RuleSet.Decision decision = context.rules().decide(check, memberState, advertisedMember, hellos::streamedRequest);
        if (decision == null) {
            return false;
        }
        if (decision.action().injects()) {
            observer.faultInjected(check, decision.action().name());
        }
        decision.action().apply(new InterceptedStreamedHello(exchange, streamed, goOn, membersReply));
        return true;
    }

    /** A rule failed a streamed check: the error ends the stream; what the member still sends for it is dropped. */
    void endStreamWith(BsonDocument error) {
        standIn.answerAwaitingWith(error, () -> { }); // its fault was counted as the rule fired
    }

    /** A rule swallowed a streamed check: nothing more of the stream reaches the client, which waits out its own timeout. */
    void endStreamUnanswered() {
        hellos.endStreamUnanswered();
    }

    void blackholeEnded() {
        standIn.blackholeEnded();
    }

    /**
     * The awaitable hello the member holds is answered now: with the member's state ({@link HelloStandIn#answerAwaitingNow})
     * or, given one, with {@code error} (a quiesce: {@link HelloStandIn#answerAwaitingWith}).
     *
     * @return whether a waiting hello was answered
     */
    boolean answerAwaiting(BsonDocument error) {
        if (error == null) {
            return awaited.helloAnswered(standIn.answerAwaitingNow());
        }
        String command = hellos.awaitingName();
        // a restart's quiesce broke the monitor's check: its fault, as a new hello's, counted before the client can see it
        return awaited.helloAnswered(standIn.answerAwaitingWith(error,
                () -> observer.faultInjected(command != null ? command : "hello", DeploymentFaults.RESTART)));
    }

    /** Whether this client said helloOk: true (see {@link ClientHelloOk}). */
    boolean clientSaidHelloOk() {
        return helloOk.said();
    }
}
