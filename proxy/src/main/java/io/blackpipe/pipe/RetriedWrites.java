package io.blackpipe.pipe;

import io.blackpipe.topology.MemberQuirks;
import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.bson.BsonDocument;

/**
 * What mongod remembers of each session's latest retryable write, kept in the place of a member that
 * runs a retried write again ({@link MemberQuirks#reappliesRetriedWrites}, jongodb): its reply to the
 * write's first run, by lsid and txnNumber. mongod answers a write that comes again with the same
 * lsid and txnNumber (a driver's retry after a lost reply, or the first attempt reaching it after its
 * retry) from that first run, without running it again; the proxy answers it with that reply. A failed
 * run (ok: 0) is not remembered, as mongod runs a failed statement again. Shared by every member, as
 * a replica set's members share the sessions' table; as on mongod, a session keeps only its latest
 * txnNumber. Bounded by sessions and bytes (the least recently used are forgotten). Not handled: a retry sent while the first run is still at the member (a member slower
 * than the client's socketTimeoutMS) runs twice.
 */
final class RetriedWrites {
    /** Sessions remembered at most; past that the least recently used are forgotten (drivers end theirs far sooner). */
    static final int MAX_SESSIONS = 10_000;
    /** Reply bytes kept at most: a findAndModify's reply holds its document, up to 16 MiB. */
    static final long MAX_BYTES = 64L << 20;

    private record FirstRun(long txnNumber, BsonDocument reply, int bytes) {
    }

    /** In the order of their last use, the least recent first. */
    private final Map<UUID, FirstRun> bySession = new LinkedHashMap<>(16, 0.75f, true);
    private long keptBytes;

    /** Whether this command is a retryable write whose runs the proxy keeps track of for this member. */
    static boolean tracked(CommandFacts facts, MemberQuirks quirks) {
        return quirks.reappliesRetriedWrites() && isRetryableWrite(facts);
    }

    /** A write with a session and a txnNumber outside a transaction, that asks for a reply: what drivers retry. */
    private static boolean isRetryableWrite(CommandFacts facts) {
        return facts.hasTxnNumber() && !facts.inTransaction() && !facts.moreToCome() && facts.lsid() != null;
    }

    /** The member's reply to this write's first run, when it ran already: the answer in its place. Else null. */
    synchronized BsonDocument firstRun(CommandFacts facts) {
        FirstRun first = bySession.get(facts.lsid());
        return first != null && first.txnNumber() == facts.txnNumber() ? first.reply().clone() : null;
    }

    /**
     * The member's reply to {@code answered}, a command of a member that runs retried writes again: a retryable
     * write's run is remembered as its reply comes, before a blackhole holds that reply or a rule's fate loses it.
     */
    void ran(InFlight answered, ByteBuf reply) {
        if (answered != null && !answered.isHello() && isRetryableWrite(answered.attempt.facts())) {
            ran(answered.attempt.facts(), reply, ReplyFacts.of(reply));
        }
    }

    /** Remembers the member's reply (an OP_MSG) to a write's run, unless it failed or is older than the session's latest. */
    void ran(CommandFacts facts, ByteBuf reply, ReplyFacts replyFacts) {
        if (!replyFacts.ok() || Header.opCode(reply) != OpCode.OP_MSG) {
            return;
        }
        OpMsg msg = OpMsg.parse(reply);
        BsonDocument body = BsonIo.decode(reply, msg.bodyOffset(), msg.sectionsEnd());
        int bytes = msg.sectionsEnd() - msg.bodyOffset();
        synchronized (this) {
            FirstRun known = bySession.get(facts.lsid());
            if (known == null || known.txnNumber() < facts.txnNumber()) {
                FirstRun replaced = bySession.put(facts.lsid(), new FirstRun(facts.txnNumber(), body, bytes));
                keptBytes += bytes - (replaced == null ? 0 : replaced.bytes());
                forgetTheLeastRecentPastTheBounds();
            }
        }
    }

    private void forgetTheLeastRecentPastTheBounds() {
        Iterator<FirstRun> leastRecentFirst = bySession.values().iterator();
        while ((bySession.size() > MAX_SESSIONS || keptBytes > MAX_BYTES) && leastRecentFirst.hasNext()) {
            keptBytes -= leastRecentFirst.next().bytes();
            leastRecentFirst.remove();
        }
    }
}
