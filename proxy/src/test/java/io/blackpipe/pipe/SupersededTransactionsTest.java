package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.blackpipe.topology.MemberQuirks;
import io.blackpipe.topology.MemberStates;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/** Which transaction of a session the proxy aborts before the session's newer one; the driver's side is SupersededTransactionDriverTest. */
class SupersededTransactionsTest {
    private static final MemberQuirks KEEPS = new MemberQuirks(true, true, true, true, true, true, true, true, true);

    private final SupersededTransactions transactions = new SupersededTransactions(new MemberStates(), new ProxyLog());
    private final UUID session = UUID.randomUUID();

    private static CommandFacts command(String name, UUID lsid, long txnNumber, boolean inTransaction) {
        return new CommandFacts(7, OpCode.OP_MSG, name, "shop", "orders", 0, lsid, txnNumber, inTransaction, "", false,
                false, null, 0);
    }

    private static ReplyFacts reply(String body) {
        ByteBuf frame = Messages.opMsg(UnpooledByteBufAllocator.DEFAULT, 1, 7, 0, BsonDocument.parse(body));
        try {
            return ReplyFacts.of(frame);
        } finally {
            frame.release();
        }
    }

    private BsonDocument abortOf(long txnNumber) {
        return BsonDocument.parse("{abortTransaction: 1, txnNumber: {$numberLong: '" + txnNumber + "'}, autocommit: false, $db: 'admin'}")
                .append("lsid", new BsonDocument("id", new BsonBinary(session)));
    }

    @Test
    void aNewerTransactionOfTheSessionGoesBehindTheAbortOfTheOneStillOpen() {
        assertNull(transactions.abortBefore(command("insert", session, 1, true), KEEPS), "the first transaction");
        assertNull(transactions.abortBefore(command("update", session, 1, true), KEEPS), "its next statement");
        assertNull(transactions.abortBefore(command("commitTransaction", session, 1, true), KEEPS), "its commit");
        assertEquals(abortOf(1), transactions.abortBefore(command("insert", session, 2, true), KEEPS));
        assertNull(transactions.abortBefore(command("insert", session, 2, true), KEEPS), "aborted once: the newer one is noted now");
        assertNull(transactions.abortBefore(command("insert", UUID.randomUUID(), 3, true), KEEPS), "another session's");
    }

    @Test
    void aCommitOrAbortAnsweredOkEndsItAndAnErrorDoesNot() {
        CommandFacts commit = command("commitTransaction", session, 1, true);
        transactions.abortBefore(command("insert", session, 1, true), KEEPS);
        transactions.abortBefore(commit, KEEPS);
        transactions.answered(commit, reply("{ok: 0, code: 112, codeName: 'WriteConflict'}"));
        assertEquals(abortOf(1), transactions.abortBefore(command("insert", session, 2, true), KEEPS));

        CommandFacts abort = command("abortTransaction", session, 2, true);
        transactions.abortBefore(abort, KEEPS);
        transactions.answered(abort, reply("{ok: 1}"));
        assertNull(transactions.abortBefore(command("insert", session, 3, true), KEEPS), "ended: nothing to abort");
        transactions.answered(command("commitTransaction", session, 3, true), reply("{ok: 1}"));
        assertNull(transactions.abortBefore(command("insert", session, 4, true), KEEPS));
    }

    @Test
    void aRetryableWriteOfTheSessionWithANewerNumberAbortsItToo() {
        transactions.abortBefore(command("insert", session, 1, true), KEEPS);
        assertNull(transactions.abortBefore(command("insert", session, 1, false), KEEPS), "not newer");
        assertEquals(abortOf(1), transactions.abortBefore(command("insert", session, 2, false), KEEPS));
        assertNull(transactions.abortBefore(command("insert", session, 3, false), KEEPS), "no transaction noted since");
    }

    @Test
    void aMemberThatEndsTheOpenOneItselfGetsNoAbort() {
        transactions.abortBefore(command("insert", session, 1, true), MemberQuirks.NONE);
        assertNull(transactions.abortBefore(command("insert", session, 2, true), MemberQuirks.NONE));
        assertNull(transactions.abortBefore(command("insert", null, 2, true), KEEPS), "no session");
    }
}
