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
import org.bson.BsonValue;

/**
 * mongod's answer to a one-statement write that meets a duplicate key, for a member that answers it
 * otherwise ({@link io.blackpipe.topology.MemberQuirks#duplicateKeyAsCommandError}, jongodb): ok: 1,
 * n: 0 and the error in writeErrors at index 0, where jongodb answers ok: 0 with code 11000. Drivers
 * raise a write error for mongod's (the Java driver's MongoWriteException, category DUPLICATE_KEY) and a
 * command error for jongodb's, so an app that catches the first, as the idempotent insert of a retried
 * write does, met the second on jongodb alone. A batch insert is inserted again as mongod would have applied it
 * ({@link BatchInsertReruns}: jongodb applies none of its documents when one is a duplicate).
 *
 * <p>mongod's write error also names the index's key pattern and the duplicate values (keyPattern, keyValue), which the
 * Node.js driver raises as the error's own fields (Mongoose reports a unique field's duplicate by them); jongodb's names
 * only the index and the values as text. For a one-document insert they are given as mongod gives them where they can
 * be told for sure: the index {@code _id_}, or one of a name mongod would have given it (field_1_other_-1) whose
 * fields the error's key names; the values then come from the inserted document, with their types.
 */
final class DuplicateKeys {
    static final int CODE = 11000;
    /** The field that holds each write command's statements. */
    private static final Map<String, String> STATEMENTS = Map.of("insert", "documents", "update", "updates", "delete", "deletes");

    private DuplicateKeys() {
    }

    /** A write of one statement whose duplicate key is answered as mongod answers it: its command, and an insert's document. */
    record OneStatement(String command, BsonDocument inserted) {
    }

    /**
     * The write, when this request is one of one statement to a member that answers its duplicate keys otherwise than
     * mongod (in a transaction too: mongod reports a write's error there in writeErrors as well, and aborts the
     * transaction); else null.
     */
    static OneStatement oneStatementWrite(ByteBuf frame, CommandFacts facts, MemberStates states, MemberAddress member) {
        String field = STATEMENTS.get(facts.name());
        if (field == null || !states.quirks(member).duplicateKeyAsCommandError() || Header.opCode(frame) != OpCode.OP_MSG) {
            return null;
        }
        OpMsg msg = OpMsg.parse(frame);
        if (msg.statements(frame, field) != 1) {
            return null;
        }
        BsonDocument command = msg.commandIfReadable(frame);
        if (command == null) {
            return null; // the member's to judge, as without the proxy
        }
        BsonDocument inserted = null;
        if (facts.name().equals("insert")) {
            BsonValue document = command.getArray(field).get(0);
            inserted = document.isDocument() ? document.asDocument() : null;
        }
        return new OneStatement(facts.name(), inserted);
    }

    /** {@code reply} as mongod gives it, when it is the member's duplicate key as the command's error ({@code reply} released); else itself. */
    static ByteBuf asMongodAnswers(ByteBufAllocator alloc, ByteBuf reply, OneStatement write) {
        String command = write.command();
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
        answer.append("writeErrors", new BsonArray(List.of(writeError(0, error, write.inserted()))));
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

    /**
     * The statement at {@code index} as mongod reports it in writeErrors, from the member's {@code error} reply to it
     * (ok: 0): its code and errmsg (and errInfo), and for a duplicate key of an insert's document ({@code inserted},
     * else null) the index's key pattern and the duplicate values where they can be told (see {@link DuplicateKeyIndex}).
     */
    static BsonDocument writeError(int index, BsonDocument error, BsonDocument inserted) {
        int code = error.getNumber("code", new BsonInt32(CODE)).intValue();
        BsonValue errmsg = error.get("errmsg", new BsonString(code == CODE ? "E11000 duplicate key error" : "write error"));
        BsonDocument writeError = new BsonDocument("index", new BsonInt32(index)).append("code", new BsonInt32(code));
        DuplicateKeyIndex key = code == CODE && errmsg.isString() && inserted != null
                ? DuplicateKeyIndex.of(errmsg.asString().getValue(), inserted) : null;
        if (key != null) {
            writeError.append("keyPattern", key.pattern()).append("keyValue", key.value());
        }
        if (error.containsKey("errInfo")) {
            writeError.append("errInfo", error.get("errInfo"));
        }
        return writeError.append("errmsg", errmsg);
    }
}
