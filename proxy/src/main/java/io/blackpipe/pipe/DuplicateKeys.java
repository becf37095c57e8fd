package io.blackpipe.pipe;

import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberStates;
import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;

/**
 * mongod's answer to a one-statement write that meets a duplicate key, for a member that answers it
 * otherwise ({@link io.blackpipe.topology.MemberQuirks#duplicateKeyAsCommandError}, jongodb): ok: 1,
 * n: 0 and the error in writeErrors at index 0, where jongodb answers ok: 0 with code 11000. Drivers
 * raise a write error for mongod's (the Java driver's MongoWriteException, category DUPLICATE_KEY) and a
 * command error for jongodb's, so an app that catches the first, as the idempotent insert of a retried
 * write does, met the second on jongodb alone. A batch is left as it came: jongodb applies none of an
 * insert's documents when one is a duplicate, where mongod applies those before it (or all the others,
 * unordered), and that cannot be told from its answer.
 */
final class DuplicateKeys {
    static final int CODE = 11000;
    /** The field that holds each write command's statements. */
    private static final Map<String, String> STATEMENTS = Map.of("insert", "documents", "update", "updates", "delete", "deletes");

    private DuplicateKeys() {
    }

    /**
     * Whether this request is a write of one statement to a member that answers its duplicate keys otherwise than mongod
     * (in a transaction too: mongod reports a write's error there in writeErrors as well, and aborts the transaction).
     */
    static boolean oneStatementWrite(ByteBuf frame, CommandFacts facts, MemberStates states, MemberAddress member) {
        String field = STATEMENTS.get(facts.name());
        return field != null && states.quirks(member).duplicateKeyAsCommandError() && Header.opCode(frame) == OpCode.OP_MSG
                && OpMsg.parse(frame).statements(frame, field) == 1;
    }

    /** {@code reply} as mongod gives it, when it is the member's duplicate key as the command's error ({@code reply} released); else itself. */
    static ByteBuf asMongodAnswers(ByteBufAllocator alloc, ByteBuf reply, String command) {
        ReplyFacts facts = ReplyFacts.of(reply);
        if (!facts.isError() || facts.code() != CODE || Header.opCode(reply) != OpCode.OP_MSG) {
            return reply;
        }
        OpMsg msg = OpMsg.parse(reply);
        BsonDocument error = BsonIo.decode(reply, msg.bodyOffset(), msg.sectionsEnd());
        BsonDocument answer = new BsonDocument("n", new BsonInt32(0));
        if (command.equals("update")) {
            answer.append("nModified", new BsonInt32(0));
        }
        answer.append("writeErrors", new BsonArray(List.of(new BsonDocument("index", new BsonInt32(0))
                .append("code", new BsonInt32(CODE))
                .append("errmsg", error.get("errmsg", new BsonString("E11000 duplicate key error"))))));
        answer.append("ok", new BsonDouble(1));
        for (String kept : List.of("$clusterTime", "operationTime")) {
            if (error.containsKey(kept)) {
                answer.append(kept, error.get(kept));
            }
        }
        ByteBuf rewritten = Messages.opMsgWithBody(alloc, reply, msg, answer);
        reply.release();
        return rewritten;
    }
}
