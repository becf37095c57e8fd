package io.blackpipe.pipe;

import io.blackpipe.topology.Member;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;
import java.util.HashMap;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;

/**
 * The batch inserts one connection sent to a member that applies none of a batch that meets a duplicate key (jongodb;
 * see {@link BatchInsertReruns}), until their replies. A reply that is such a duplicate key is held, the batch inserted
 * again as mongod would have, and mongod's answer goes on in the reply's place, as the member's own (rules, counters and
 * a retried write's first run see that one). The replies read after it wait for that answer, in turn (a pipelining
 * client's), and meanwhile the member's connection is not read, so that they do not pile up.
 * Outside a transaction only: there mongod's error aborts the transaction, which applies none of the batch either.
 * Used from the connection's event loop only.
 */
final class DuplicateKeyBatches {
    /** A batch insert as it was sent: its namespace and size as the scanner read them, for the log whatever the body holds. */
    private record Batch(String database, String collection, int documents, BsonDocument insert) {
    }

    private final Exchange exchange;
    private final ClientConnection connection;
    private final Member member;
    private final PipeContext context;
    private final Map<Integer, Batch> sent = new HashMap<>(4);
    /** Held replies whose batch is being inserted again. */
    private int rerunning;

    DuplicateKeyBatches(Exchange exchange, Member member, PipeContext context) {
        this.exchange = exchange;
        this.connection = exchange.connection();
        this.member = member;
        this.context = context;
    }

    /** Notes {@code forwarded} when it is a batch insert, outside a transaction, to a member that applies none of such a batch. */
    void forwarding(ByteBuf forwarded, CommandFacts facts) {
        if (!facts.name().equals("insert") || facts.inTransaction() || facts.moreToCome() || Header.opCode(forwarded) != OpCode.OP_MSG
                || !context.memberStates().quirks(member.upstream()).duplicateKeyAsCommandError()) {
            return;
        }
        OpMsg msg = OpMsg.parse(forwarded);
        int documents = msg.statements(forwarded, "documents");
        BsonDocument insert = documents > 1 ? msg.commandIfReadable(forwarded) : null; // one that does not read is the member's to judge
        if (insert != null) {
            sent.put(Header.requestId(forwarded), new Batch(facts.database(), facts.collection(), documents, insert));
        }
    }

    /** True when {@code reply} answers a noted batch with a duplicate key: it is held (its buffer kept) until the batch ran again. */
    boolean heldForARerun(ByteBuf reply) {
        Batch batch = sent.isEmpty() ? null : sent.remove(Header.responseTo(reply));
        if (batch == null || Header.opCode(reply) != OpCode.OP_MSG) {
            return false;
        }
        ReplyFacts facts = ReplyFacts.of(reply);
        if (facts.ok() || facts.code() != DuplicateKeys.CODE) {
            return false;
        }
        WaitingReplies.Turn turn = exchange.replies().keepTurn();
        connection.pauseUpstreamReads(true);
        rerunning++;
        context.batchInserts().rerun(member, batch.database(), batch.insert()).whenComplete((answer, failure) -> {
            if (!connection.runOnItsEventLoop(() -> ranAgain(reply, batch, turn, answer, failure))) {
                reply.release(); // the proxy closed meanwhile
            }
        });
        return true;
    }

    /**
     * Whether a noted batch's reply is still to come, or is held for its batch to run again: after the client left, the
     * member's connection stays open for it (see AfterTheClientLeft), as mongod applies a batch whose client went away.
     */
    boolean awaited() {
        return !sent.isEmpty() || rerunning > 0;
    }

    private void ranAgain(ByteBuf reply, Batch batch, WaitingReplies.Turn turn, BsonDocument answer, Throwable failure) {
        rerunning--;
        connection.pauseUpstreamReads(false);
        String batchOf = "a batch insert of " + batch.documents() + " documents into " + batch.database() + "." + batch.collection();
        ByteBuf passed = reply;
        if (answer == null) {
            context.log().warn("member " + member.upstream() + " applied none of " + batchOf + " that met a duplicate key, and"
                    + " inserting them again failed (" + (failure.getCause() == null ? failure : failure.getCause()).getMessage()
                    + "): its answer passes as it came");
        } else {
            passed = Messages.opMsgWithBody(connection.alloc(), reply, OpMsg.parse(reply), answer);
            reply.release();
            context.log().info("member " + member.upstream() + " applied none of " + batchOf + " that met a duplicate key:"
                    + " inserted them again as mongod would have (n: " + answer.getNumber("n").intValue() + ", "
                    + answer.getArray("writeErrors", new BsonArray()).size() + " write errors)");
        }
        if (turn.dropped()) {
            connection.passOn(passed); // the client left: to its run
        } else {
            if (!exchange.runs().isEmpty()) { // its run ends now, as a reply's ends as it comes (Exchange#onReply)
                exchange.runs().onReply(Header.responseTo(passed), passed);
            }
            exchange.replies().fillTurn(turn, passed);
        }
        connection.flushClient(); // read outside the member's read loop, whose end would flush it
    }
}
