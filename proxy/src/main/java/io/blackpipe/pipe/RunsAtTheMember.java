package io.blackpipe.pipe;

import io.blackpipe.wire.CommandFacts;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * The retryable writes one connection sent to a member that runs retried writes again, until their
 * replies: each is a run {@link RetriedWrites} marks, which its reply (or the connection's end) ends.
 * Used from the connection's event loop only.
 */
final class RunsAtTheMember {
    private final RetriedWrites retriedWrites;
    /** In the order sent: a driver has one at a time on a connection. */
    private final List<CommandFacts> sent = new ArrayList<>();

    RunsAtTheMember(RetriedWrites retriedWrites) {
        this.retriedWrites = retriedWrites;
    }

    void sent(CommandFacts write) {
        sent.add(write);
    }

    boolean isEmpty() {
        return sent.isEmpty();
    }

    /** The member's {@code reply}: when it answers one of these runs, the run ends with it (see {@link RetriedWrites#ran}). */
    void onReply(int responseTo, ByteBuf reply) {
        for (int i = 0; i < sent.size(); i++) {
            if (sent.get(i).requestId() == responseTo) {
                retriedWrites.ran(sent.remove(i), reply);
                return;
            }
        }
    }

    /** The member's connection closed: the runs not answered end unanswered (see {@link RetriedWrites#ended}). */
    void endedUnanswered() {
        while (!sent.isEmpty()) {
            retriedWrites.ended(sent.remove(0));
        }
    }
}
