package io.blackpipe.pipe;

import io.blackpipe.wire.CommandFacts;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * The commands one connection sent to a member that others wait on, until their replies: a retryable write's
 * run that {@link RetriedWrites} marks (at a member that runs retried writes again), and a commit or a write
 * that {@link CommitsAlone} admitted (at a member whose commit races the writes beside it). Each ends with
 * its reply, or with the connection's end. Used from the connection's event loop only.
 */
final class RunsAtTheMember {
    private record Run(CommandFacts facts, boolean tracked, CommitsAlone.Kind gated) {
    }

    private final RetriedWrites retriedWrites;
    private final CommitsAlone commits;
    private final ClientConnection connection;
    /** In the order sent: a driver has one at a time on a connection. */
    private final List<Run> sent = new ArrayList<>();

    RunsAtTheMember(RetriedWrites retriedWrites, CommitsAlone commits, ClientConnection connection) {
        this.retriedWrites = retriedWrites;
        this.commits = commits;
        this.connection = connection;
    }

    /**
     * {@code verdict}'s frame went to the member: what others wait on in it is marked until its reply, or ends at once if
     * the member's connection had closed before (its end, which ends the others, came already).
     */
    void sent(CommandFacts facts, SimulatedSecondary.Verdict verdict) {
        if (verdict.runsFirst() || verdict.gated() != null) {
            sent.add(new Run(facts, verdict.runsFirst(), verdict.gated()));
            if (!connection.upstreamOpen()) {
                endedUnanswered();
            }
        }
    }

    boolean isEmpty() {
        return sent.isEmpty();
    }

    /** The member's {@code reply}: when it answers one of these, that one ends with it (see {@link RetriedWrites#ran}). */
    void onReply(int responseTo, ByteBuf reply) {
        for (int i = 0; i < sent.size(); i++) {
            if (sent.get(i).facts().requestId() == responseTo) {
                Run run = sent.remove(i);
                try {
                    if (run.tracked()) {
                        retriedWrites.ran(run.facts(), reply);
                    }
                } finally {
                    endGated(run);
                }
                return;
            }
        }
    }

    /** The member's connection closed: the ones not answered end unanswered (see {@link RetriedWrites#ended}). */
    void endedUnanswered() {
        while (!sent.isEmpty()) {
            Run run = sent.remove(0);
            try {
                if (run.tracked()) {
                    retriedWrites.ended(run.facts());
                }
            } finally {
                endGated(run);
            }
        }
    }

    private void endGated(Run run) {
        if (run.gated() != null) {
            commits.ended(run.gated());
        }
    }
}
