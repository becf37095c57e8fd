package io.blackpipe.pipe;

import io.blackpipe.fault.ErrorReplies;
import io.blackpipe.topology.MemberState;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.ReadPreference;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.Set;
import java.util.function.Supplier;
import org.bson.BsonDocument;

/**
 * What a simulated secondary does with a command, as a real secondary would (the server's
 * commandCanRunHere): commands allowed on any member and commands on the never-replicated local
 * database run; reads run only with secondaryOk (else NotPrimaryNoSecondaryOk); anything else is
 * refused as a write (NotWritablePrimary), each refusal worded as mongod words it to the client
 * ("not master" to one that never said helloOk: true). What it serves reaches the one real upstream
 * with its $readPreference dropped ({@link QuirkRewrites}), since that node may accept only primary reads.
 */
final class SimulatedSecondary {
    /**
     * Commands a secondary serves without secondaryOk (the server's AllowedOnSecondary::kAlways
     * among those drivers and tools send), passed to the real node as they are. The real node's
     * replSetGetStatus, replSetGetConfig and serverStatus name its own role and members: {@link
     * ReplyRewrites} tells them as this member's (see SetDescriptions#describesTheSet). Left out, so
     * refused as writes: the kAlways commands that act on the member's role (replSetStepDown, which
     * a real secondary refuses the same way; replSetFreeze, replSetMaintenance, replSetSyncFrom),
     * which the one real node cannot do for one simulated member.
     */
    private static final Set<String> ALWAYS_ALLOWED = Set.of("ping", "buildInfo", "buildinfo", "endSessions", "getMore",
            "killCursors", "connectionStatus", "serverStatus", "hello", "isMaster", "ismaster", "saslStart", "saslContinue",
            "logout", "authenticate", "whatsmyuri", "listCommands", "hostInfo", "getCmdLineOpts", "getParameter", "getLog",
            "killSessions", "killAllSessions", "refreshSessions", "startSession", "replSetGetStatus", "replSetGetConfig",
            "currentOp", "killOp", "getDefaultRWConcern");
    /** Reads a secondary serves when the client allows secondaries. */
    private static final Set<String> READS = Set.of("find", "aggregate", "count", "distinct", "listCollections",
            "listIndexes", "listDatabases", "dbStats", "collStats", "explain");

    /**
     * Either the member's own answer instead of the command (a refusal, or a simulated stepdown's ok), or the frame to
     * forward, and then, when not null, the reply the client gets in place of the real node's (see FailoverEndedTransactions).
     * {@code turn}, for a retryable write of a member that runs retried writes again (see RetriedWrites), else null: the
     * answer is the member's reply to the write's first run, which a rule's reply fate meets as it would meet the member's
     * reply ({@link #ranBefore}); or the frame is the first run ({@link #runsFirst}). {@code gated}, for a commit or a write
     * of a member whose commit races the writes beside it (see CommitsAlone), else null: the frame is at the member until
     * its reply. A command that waits its turn (a retried write behind its first run still at the member, a commit or a
     * write behind one another) has no answer and no frame yet ({@link #waits}).
     */
    record Verdict(BsonDocument answer, ByteBuf frame, BsonDocument replyInstead, RetriedWrites.Turn turn, CommitsAlone.Kind gated) {
        Verdict(BsonDocument answer, ByteBuf frame) {
            this(answer, frame, null, null, null);
        }

        Verdict(BsonDocument answer, ByteBuf frame, BsonDocument replyInstead) {
            this(answer, frame, replyInstead, null, null);
        }

        static Verdict retried(RetriedWrites.Turn turn) {
            return new Verdict(turn.ranBefore(), null, null, turn, null);
        }

        /** This frame goes to the member as a retried write's first run ({@code tracked}), and as a {@code gated} command. */
        Verdict atTheMember(boolean tracked, CommitsAlone.Kind gated) {
            return new Verdict(answer, frame, replyInstead, tracked ? RetriedWrites.Turn.RUNS : null, gated);
        }

        boolean ranBefore() {
            return turn != null && turn.ranBefore() != null;
        }

        boolean waits() {
            return turn == RetriedWrites.Turn.WAITS;
        }

        boolean runsFirst() {
            return turn == RetriedWrites.Turn.RUNS;
        }
    }

    private SimulatedSecondary() {
    }

    /** @param topologyVersion the member's, which a real secondary's NotPrimary errors carry (null: none known) */
    static Verdict check(ByteBufAllocator alloc, ByteBuf frame, CommandFacts facts, MemberState state, boolean clientSaidHelloOk,
                         Supplier<BsonDocument> topologyVersion) {
        if (ALWAYS_ALLOWED.contains(facts.name()) || "local".equals(facts.database())) {
            return new Verdict(null, QuirkRewrites.asTheMemberTakesIt(alloc, frame, QuirkRewrites.SIMULATED_NODE));
        }
        if (!READS.contains(facts.name())) {
            // mongod's own words for rs.stepDown() on a secondary
            String errmsg = facts.name().equals("replSetStepDown") ? "not primary so can't step down"
                    : ErrorReplies.notPrimaryWording(10107, clientSaidHelloOk);
            return new Verdict(ErrorReplies.error(10107, errmsg, null, topologyVersion.get(), facts, state), null);
        }
        OpMsg msg = OpMsg.parse(frame); // a command the proxy judges is an OP_MSG
        if (ReadPreference.mode(frame, msg).equals("primary")) {
            return new Verdict(ErrorReplies.error(13435, ErrorReplies.notPrimaryWording(13435, clientSaidHelloOk), null,
                    topologyVersion.get(), facts, state), null);
        }
        return new Verdict(null, QuirkRewrites.withoutReadPreference(alloc, frame, msg));
    }
}
