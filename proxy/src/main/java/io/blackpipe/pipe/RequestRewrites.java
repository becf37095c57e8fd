package io.blackpipe.pipe;

import io.blackpipe.fault.ErrorReplies;
import io.blackpipe.topology.HelloRewriter;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberQuirks;
import io.blackpipe.topology.MemberState;
import io.blackpipe.topology.SimulatedReplicaSet;
import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.bson.BsonDocument;
import org.bson.BsonDouble;

/**
 * The few requests the proxy changes on their way to a real member, so that what the proxy made the
 * members say of each other does not come back to them as their own: a replica set configuration
 * read through the proxy names the proxy's addresses, and one written through it must name theirs.
 */
final class RequestRewrites {
    private RequestRewrites() {
    }

    /**
     * What this member does with a command: a simulated secondary refuses writes and reads without
     * secondaryOk (an error to answer with) and strips the read preference of the reads it serves;
     * a simulated primary asked to step down hands its role on, as the admin API's failover does, and
     * answers the commands of a transaction a failover ended as the new primary would; a real member
     * takes the frame as it is, but for a replica set configuration that names the proxy's addresses,
     * and as it takes what a mongod takes where it refuses that (jongodb: see QuirkRewrites); where it
     * has no endSessions, or runs a retried write again (see RetriedWrites), the member's answer is mongod's; where its
     * commit races the writes beside it, a commit goes alone (see CommitsAlone).
     * {@code clientSaidHelloOk} words a refusal as mongod words it to this client. A command that must wait its turn (a
     * retried write whose first run is still at the member, a commit or write behind one another) gets a verdict that
     * {@link SimulatedSecondary.Verdict#waits}: {@code wakeWhenItsTurnMayHaveCome} is called when it should ask again.
     */
    static SimulatedSecondary.Verdict asThisMemberTakesIt(ByteBuf frame, CommandFacts facts, PipeContext context, Member member,
                                                          MemberState state, boolean clientSaidHelloOk, ByteBufAllocator alloc,
                                                          Runnable wakeWhenItsTurnMayHaveCome) {
        SimulatedReplicaSet simulation = context.simulation();
        MemberQuirks quirks = context.memberStates().quirks(member.upstream());
        if (quirks.lacksEndSessions() && facts.name().equals("endSessions")) {
            return new SimulatedSecondary.Verdict(new BsonDocument("ok", new BsonDouble(1)), null); // as mongod answers it
        }
        boolean onPrimary = simulation == null || simulation.isPrimary(member.upstream()); // a secondary refuses writes first
        boolean tracked = onPrimary && RetriedWrites.tracked(facts, quirks);
        CommitsAlone.Kind gated = CommitsAlone.kindOf(facts, quirks);
        if (gated == CommitsAlone.Kind.WRITE && !onPrimary) {
            gated = null; // but a commit asks wherever it is: one that waited, on a primary a failover since stepped down, has its place
        }
        if (!tracked && gated == null) {
            return asTheMemberTakesIt(frame, facts, context, member, state, clientSaidHelloOk, alloc, quirks);
        }
        if (tracked) { // a retried write that ran is answered as mongod answers it
            RetriedWrites.Turn turn = context.retriedWrites().turnOf(facts, wakeWhenItsTurnMayHaveCome);
            if (turn.forgotten()) {
                context.log().warn("a retried " + facts.name() + " on " + member.upstream() + " refused with IncompleteTransactionHistory:"
                        + " its first run's reply was forgotten for later ones (" + (RetriedWrites.MAX_BYTES >> 20) + " MiB of replies"
                        + " at most), and " + member.upstream() + " would run it again (it does not de-duplicate retried writes)");
            }
            if (turn != RetriedWrites.Turn.RUNS) {
                return SimulatedSecondary.Verdict.retried(turn);
            }
        }
        if (gated != null && !context.commits().admits(gated, wakeWhenItsTurnMayHaveCome)) {
            if (tracked) {
                context.retriedWrites().ended(facts); // not at the member yet: its retry may not wait for it
            }
            return SimulatedSecondary.Verdict.retried(RetriedWrites.Turn.WAITS);
        }
        SimulatedSecondary.Verdict verdict = null;
        try {
            verdict = asTheMemberTakesIt(frame, facts, context, member, state, clientSaidHelloOk, alloc, quirks);
        } finally {
            if (verdict == null || verdict.frame() == null) { // answered in the member's place: it never ran there
                if (tracked) {
                    context.retriedWrites().ended(facts);
                }
                if (gated != null) {
                    context.commits().ended(gated);
                }
            }
        }
        return verdict.frame() == null ? verdict : verdict.atTheMember(tracked, gated);
    }

    private static SimulatedSecondary.Verdict asTheMemberTakesIt(ByteBuf frame, CommandFacts facts, PipeContext context,
                                                                 Member member, MemberState state, boolean clientSaidHelloOk,
                                                                 ByteBufAllocator alloc, MemberQuirks quirks) {
        SimulatedReplicaSet simulation = context.simulation();
        if (simulation == null) {
            ByteBuf forwarded = asTheMembersKnowThem(frame, facts, context.rewriter(), alloc);
            return new SimulatedSecondary.Verdict(null, QuirkRewrites.asTheMemberTakesIt(alloc, forwarded, quirks));
        }
        if (simulation.isPrimary(member.upstream())) {
            if (facts.name().equals("replSetStepDown") && "admin".equals(facts.database())) {
                // rs.stepDown(): the simulated set elects another member, as a real set would; the one real
                // node stepping down would leave every simulated member without a primary (jongodb has no such command)
                context.failover().run();
                return new SimulatedSecondary.Verdict(new BsonDocument("ok", new BsonDouble(1)), null);
            }
            BsonDocument endedByAFailover = context.endedTransactions().onPrimary(facts, state);
            if (endedByAFailover != null) {
                return new SimulatedSecondary.Verdict(null, FailoverEndedTransactions.abortInstead(alloc, frame), endedByAFailover);
            }
            return new SimulatedSecondary.Verdict(null, QuirkRewrites.asTheMemberTakesIt(alloc, frame, quirks));
        }
        if (simulation.nodeLacks(facts.name())) { // mongod looks the command up before it asks its role
            return new SimulatedSecondary.Verdict(ErrorReplies.error(59, "no such command: '" + facts.name() + "'", null, null,
                    facts, state), null);
        }
        return SimulatedSecondary.check(alloc, frame, facts, state, clientSaidHelloOk,
                () -> context.memberStates().topologyVersion(member.upstream(), false));
    }

    /** {@code frame} as the member should get it: the same frame, or a rewritten one that replaces it. */
    private static ByteBuf asTheMembersKnowThem(ByteBuf frame, CommandFacts facts, HelloRewriter rewriter, ByteBufAllocator alloc) {
        String name = facts.name();
        if (!(name.equals("replSetReconfig") || name.equals("replSetInitiate")) || !rewriter.rewritesAddresses()) {
            return frame; // what every other command pays: two comparisons of its name
        }
        if (Header.opCode(frame) != OpCode.OP_MSG) {
            return frame;
        }
        OpMsg msg = OpMsg.parse(frame);
        BsonDocument body = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
        if (!rewriter.namingTheMembers(name, body)) {
            return frame;
        }
        ByteBuf rewritten = Messages.opMsgWithBody(alloc, frame, msg, body);
        frame.release();
        return rewritten;
    }
}
