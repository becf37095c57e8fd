package io.blackpipe.wire;

import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** A connection's scanner keeps its names, fingerprint runs and last session between commands: nothing of one may leak into the next. */
class CommandScannerTest {
    private static final UUID FIRST = UUID.fromString("00112233-4455-6677-8899-aabbccddeeff");
    private static final UUID SECOND = UUID.fromString("ffeeddcc-bbaa-9988-7766-554433221100");

    private static BsonDocument session(UUID id) {
        return new BsonDocument("id", new BsonBinary(id));
    }

    /** The facts of {@code frame} read by {@code scanner}, from a pooled direct buffer as the proxy's are. */
    private static CommandFacts scan(CommandScanner scanner, byte[] frame) {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(frame.length).writeBytes(frame);
        try {
            return scanner.ofOpMsg(buf, OpMsg.parse(buf));
        } finally {
            buf.release();
        }
    }

    private static CommandFacts fresh(byte[] frame) {
        return scan(new CommandScanner(), frame);
    }

    @Test
    void oneScannerReadsEveryCommandOfASequenceAsAFreshOneDoes() {
        // Each differs from the one before in what the scanner keeps: five runs then one (the runs'
        // array of further bounds stays behind), a session then none, a document sequence, a
        // transaction number (no fingerprint), the handshake's nested documents.
        List<byte[]> commands = List.of(
                opMsg(1, 0, 0).body(bson(new BsonDocument("find", new BsonString("orders")).append("lsid", session(FIRST))
                        .append("filter", new BsonDocument("qty", new BsonInt32(5))).append("maxTimeMS", new BsonInt32(900))
                        .append("limit", new BsonInt32(1)).append("$clusterTime", new BsonDocument()).append("sort",
                                new BsonDocument("_id", new BsonInt32(1))).append("readConcern", new BsonDocument())
                        .append("$db", new BsonString("shop")))).build(),
                opMsg(2, 0, 0).body(bson(new BsonDocument("find", new BsonString("orders"))
                        .append("$db", new BsonString("shop")).append("lsid", session(FIRST)))).build(),
                opMsg(3, 0, 0).body(bson(new BsonDocument("count", new BsonString("items"))
                        .append("$db", new BsonString("other")))).build(),
                opMsg(4, 0, 0).body(bson(new BsonDocument("insert", new BsonString("items")).append("$db", new BsonString("shop"))
                                .append("lsid", session(SECOND))))
                        .sequence("documents", bson(new BsonDocument("_id", new BsonInt32(1)))).build(),
                opMsg(5, 0, 0).body(bson(new BsonDocument("update", new BsonString("items")).append("$db", new BsonString("shop"))
                        .append("lsid", session(SECOND)).append("txnNumber", new BsonInt64(3)))).build(),
                opMsg(6, 0, 0).body(bson(new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin"))
                        .append("client", new BsonDocument("application", new BsonDocument("name", new BsonString("app")))))).build(),
                opMsg(7, 0, 0).body(bson(new BsonDocument("find", new BsonString("orders")).append("lsid", session(FIRST))
                        .append("filter", new BsonDocument("qty", new BsonInt32(5))).append("$db", new BsonString("shop")))).build());

        CommandScanner scanner = new CommandScanner();
        for (int round = 0; round < 2; round++) { // the second round starts with what the last command left
            for (byte[] command : commands) {
                assertEquals(fresh(command), scan(scanner, command));
            }
        }
        assertNotEquals(0, fresh(commands.get(0)).fingerprint(), "the first find has a fingerprint to compare");
    }

    @Test
    void aSessionThatComesBackIsTheSameIdAndAnotherIsItsOwn() {
        CommandScanner scanner = new CommandScanner();
        byte[] first = opMsg(1, 0, 0).body(bson(new BsonDocument("find", new BsonString("c")).append("lsid", session(FIRST))
                .append("$db", new BsonString("d")))).build();
        byte[] second = opMsg(2, 0, 0).body(bson(new BsonDocument("find", new BsonString("c")).append("lsid", session(SECOND))
                .append("$db", new BsonString("d")))).build();

        UUID once = scan(scanner, first).lsid();
        UUID again = scan(scanner, first).lsid();
        UUID other = scan(scanner, second).lsid();
        UUID back = scan(scanner, first).lsid();

        assertEquals(FIRST, once);
        assertSame(once, again, "the same session on the same connection: no new UUID");
        assertEquals(SECOND, other);
        assertEquals(FIRST, back);
        assertNotSame(once, back, "only the last session is kept");
    }
}
