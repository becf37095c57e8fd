package io.blackpipe.pipe;

import io.blackpipe.wire.Header;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpQuery;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;

/**
 * A legacy driver's opcodes on their way to the member, which judges them as without the proxy; except at a member that
 * takes the legacy OP_QUERY mongod 5.1 removed though its wire version says 5.1 or later
 * ({@link io.blackpipe.topology.MemberQuirks#legacyQueriesAsCommands}, jongodb). Its answer to an OP_QUERY find (an unknown
 * command's error) reached PyMongo 3's exhaust cursors and raw batches as the one document found, and an old driver's
 * commands over OP_QUERY ran there as they would fail on mongod 5.1+. The proxy answers them as mongod 5.1+ does: an
 * OP_QUERY find or an OP_GET_MORE with QueryFailure and code 5739101, an OP_QUERY command other than the handshake's with
 * UnsupportedOpQueryCommand; none of them is counted as a command, as without that quirk.
 */
final class LegacyOpcodes {
    private static final int REMOVED_CODE = 5739101;
    private static final int UNSUPPORTED_OP_QUERY_COMMAND = 352;
    private static final int QUERY_FAILURE = 2;
    private static final String UPGRADE = " The client driver may require an upgrade. For more details see"
            + " https://dochub.mongodb.org/core/legacy-opcode-removal";
    /** responseFlags of a command's reply over OP_QUERY, failed or not (mongod's setResultFlagsToOk). */
    private static final int AWAIT_CAPABLE = 8;
    /** The commands mongod 5.1+ still runs over OP_QUERY: the handshake's, and those old drivers authenticate with. */
    private static final Set<String> TAKEN = Set.of("hello", "isMaster", "ismaster", "_isSelf", "authenticate", "buildinfo",
            "buildInfo", "saslContinue", "saslStart");

    private LegacyOpcodes() {
    }

    /**
     * Sends {@code frame} (a legacy opcode, or an OP_QUERY that is no hello: {@code commandName} is its command's name, or
     * null for another opcode) to the member, or answers it as mongod 5.1+ would.
     */
    static void forward(ByteBuf frame, String commandName, ClientConnection connection, WaitingReplies replies) {
        ByteBuf answer = connection.context().memberStates().quirks(connection.member().upstream()).legacyQueriesAsCommands()
                ? refusal(connection.alloc(), connection.context().nextRequestId(), frame, commandName) : null;
        if (answer == null) {
            connection.sendUpstream(frame);
            return;
        }
        frame.release();
        replies.sendInTurn(answer);
    }

    /** mongod 5.1+'s answer to {@code frame}, or null when it takes it (an OP_KILL_CURSORS and the like get no answer). */
    static ByteBuf refusal(ByteBufAllocator alloc, int requestId, ByteBuf frame, String commandName) {
        int responseTo = Header.requestId(frame);
        return switch (Header.opCode(frame)) {
            case OpCode.OP_GET_MORE -> removed(alloc, requestId, responseTo, "OP_GET_MORE");
            case OpCode.OP_QUERY -> {
                if (!OpQuery.parse(frame).fullCollectionName().endsWith(".$cmd")) {
                    yield removed(alloc, requestId, responseTo, "OP_QUERY"); // a find
                }
                boolean taken = commandName == null || TAKEN.contains(commandName);
                yield taken ? null : unsupportedCommand(alloc, requestId, responseTo, commandName);
            }
            default -> null;
        };
    }

    /** mongod's answer to a removed opcode ({@code makeErrorResponseToUnsupportedOpQuery}). */
    private static ByteBuf removed(ByteBufAllocator alloc, int requestId, int responseTo, String opcode) {
        BsonDocument error = new BsonDocument("$err", new BsonString(opcode + " is no longer supported." + UPGRADE))
                .append("code", new BsonInt32(REMOVED_CODE)).append("ok", new BsonDouble(0));
        return Messages.opReply(alloc, requestId, responseTo, QUERY_FAILURE, 0, 0, List.of(error));
    }

    /** mongod's answer to a command over OP_QUERY that is none of {@link #TAKEN} ({@code checkAllowedOpQueryCommand}). */
    private static ByteBuf unsupportedCommand(ByteBufAllocator alloc, int requestId, int responseTo, String commandName) {
        BsonDocument error = new BsonDocument("ok", new BsonDouble(0))
                .append("errmsg", new BsonString("Unsupported OP_QUERY command: " + commandName + "." + UPGRADE))
                .append("code", new BsonInt32(UNSUPPORTED_OP_QUERY_COMMAND))
                .append("codeName", new BsonString("UnsupportedOpQueryCommand"));
        return Messages.opReply(alloc, requestId, responseTo, AWAIT_CAPABLE, 0, 0, List.of(error));
    }
}
