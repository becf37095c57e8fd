package io.blackpipe.pipe;

import io.blackpipe.topology.Member;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpQuery;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;

/**
 * A legacy driver's opcodes on their way to the member, which judges them as without the proxy; except at a member that
 * answers a legacy OP_QUERY find or an OP_GET_MORE as an unknown command though its wire version says 5.1 or later
 * ({@link io.blackpipe.topology.MemberQuirks#legacyQueriesAsCommands}, jongodb): its error would reach PyMongo 3's exhaust
 * cursors and raw batches as the one document found. The proxy answers them as mongod 5.1+ does: an OP_REPLY with
 * QueryFailure set and its $err, code 5739101, and none of them is counted as a command, as without that quirk.
 */
final class LegacyOpcodes {
    static final int REMOVED_CODE = 5739101;
    private static final int QUERY_FAILURE = 2;

    private LegacyOpcodes() {
    }

    /** Sends {@code frame} (a legacy opcode, or an OP_QUERY that is no hello) to the member, or answers it as mongod 5.1+ would. */
    static void forward(ByteBuf frame, ClientConnection connection, WaitingReplies replies) {
        Member member = connection.member();
        String removed = removedOpcode(frame);
        if (removed == null || !connection.context().memberStates().quirks(member.upstream()).legacyQueriesAsCommands()) {
            connection.sendUpstream(frame);
            return;
        }
        ByteBuf answer = refusal(connection.alloc(), connection.context().nextRequestId(), Header.requestId(frame), removed);
        frame.release();
        replies.sendInTurn(answer);
    }

    /** The opcode's name when mongod 5.1+ answers it with QueryFailure: an OP_QUERY of a namespace that is no $cmd, an OP_GET_MORE. */
    static String removedOpcode(ByteBuf frame) {
        return switch (Header.opCode(frame)) {
            case OpCode.OP_GET_MORE -> "OP_GET_MORE";
            case OpCode.OP_QUERY -> OpQuery.parse(frame).fullCollectionName().endsWith(".$cmd") ? null : "OP_QUERY";
            default -> null;
        };
    }

    /** mongod's answer to a removed opcode ({@code makeErrorResponseToUnsupportedOpQuery}). */
    static ByteBuf refusal(ByteBufAllocator alloc, int requestId, int responseTo, String opcode) {
        BsonDocument error = new BsonDocument("$err", new BsonString(opcode + " is no longer supported. The client driver may"
                + " require an upgrade. For more details see https://dochub.mongodb.org/core/legacy-opcode-removal"))
                .append("code", new BsonInt32(REMOVED_CODE)).append("ok", new BsonDouble(0));
        return Messages.opReply(alloc, requestId, responseTo, QUERY_FAILURE, 0, 0, List.of(error));
    }
}
