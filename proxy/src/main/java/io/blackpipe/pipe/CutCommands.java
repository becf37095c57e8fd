package io.blackpipe.pipe;

import io.blackpipe.observe.Attempt;
import io.blackpipe.observe.ConnectionObserver;
import io.blackpipe.observe.Outcome;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.CommandScanner;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.netty.buffer.ByteBuf;

/**
 * Application commands that reached the proxy as their connection was going away (its member went
 * down before the outage reset it, an earlier request closed it, or they waited behind a held one):
 * each was sent all the same, so it is an attempt, ended by the close, and the driver's retry counts
 * as the retry it is. Used from the connection's event loop only.
 */
final class CutCommands {
    private final CommandScanner scanner;
    private final ConnectionObserver observer;
    private final PipeContext context;

    CutCommands(CommandScanner scanner, ConnectionObserver observer, PipeContext context) {
        this.scanner = scanner;
        this.observer = observer;
        this.context = context;
    }

    /** Counts the command in {@code frame}, ended by the close ({@code fault}: the deployment fault that cut it, or null). */
    void count(ByteBuf frame, String fault) {
        if (Header.opCode(frame) != OpCode.OP_MSG) {
            return;
        }
        CommandFacts facts = scanner.ofOpMsg(frame, OpMsg.parse(frame));
        if (facts.isHello() || FailPointCommand.answeredByTheProxy(facts.name(), context)) {
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
