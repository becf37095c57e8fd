package io.blackpipe.wire;

import static io.blackpipe.wire.WireFixtures.assertMalformed;
import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.bytes;
import static io.blackpipe.wire.WireFixtures.concat;
import static io.blackpipe.wire.WireFixtures.le32;
import static io.blackpipe.wire.WireFixtures.message;
import static io.blackpipe.wire.WireFixtures.opQuery;
import static io.blackpipe.wire.WireFixtures.useBuf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ReferenceCountUtil;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class OpQueryTest {
    private static final byte[] QUERY = bson("{isMaster: 1, helloOk: true}");
    private static final byte[] SELECTOR = bson("{ismaster: 1, hosts: 1}");
    /** header + flags + "admin.$cmd\0" + numberToSkip + numberToReturn */
    private static final int QUERY_AT = 16 + 4 + "admin.$cmd".length() + 1 + 8;

    @Test
    void parsesFieldsAndLocatesTheQuery() {
        byte[] frame = opQuery(5, 4, "admin.$cmd", 0, -1, QUERY, null);
        useBuf(frame, buf -> {
            OpQuery q = OpQuery.parse(buf);
            assertEquals(4, q.flags());
            assertEquals("admin.$cmd", q.fullCollectionName());
            assertEquals("admin", q.database());
            assertEquals(QUERY_AT, q.queryOffset());
            assertEquals(QUERY_AT + QUERY.length, q.queryEnd());
            assertEquals(frame.length, q.queryEnd());
            BsonCursor command = q.command(buf);
            assertTrue(command.next());
            assertEquals("isMaster", command.name());
        });
    }

    @Test
    void returnFieldsSelectorIsAllowedAfterTheQuery() {
        byte[] frame = opQuery(6, 0, "admin.$cmd", 0, 1, QUERY, SELECTOR);
        useBuf(frame, buf -> {
            OpQuery q = OpQuery.parse(buf);
            assertEquals(QUERY_AT + QUERY.length, q.queryEnd());
            assertEquals(frame.length - SELECTOR.length, q.queryEnd());
        });
    }

    @Test
    void databaseOfANameWithoutADotIsTheWholeName() {
        byte[] frame = opQuery(6, 0, "nodot", 0, 1, QUERY, null);
        useBuf(frame, buf -> assertEquals("nodot", OpQuery.parse(buf).database()));
    }

    @Test
    void databaseStopsAtTheFirstDot() {
        byte[] frame = opQuery(6, 0, "shop.orders.archive", 0, 1, QUERY, null);
        useBuf(frame, buf -> assertEquals("shop", OpQuery.parse(buf).database()));
    }

    @Test
    void commandLooksInsideTheQueryWrapper() {
        byte[] wrapped = bson("{$query: {ismaster: 1, client: {}}, $readPreference: {mode: 'secondaryPreferred'}}");
        byte[] frame = opQuery(7, 0, "admin.$cmd", 0, -1, wrapped, null);
        useBuf(frame, buf -> {
            BsonCursor command = OpQuery.parse(buf).command(buf);
            assertTrue(command.next());
            assertEquals("ismaster", command.name());
            assertTrue(command.next());
            assertEquals("client", command.name());
            assertFalse(command.next(), "$readPreference is outside the wrapped command");
        });
    }

    @Test
    void aQueryFieldThatIsNotADocumentIsNotAWrapper() {
        byte[] frame = opQuery(7, 0, "admin.$cmd", 0, -1, bson("{$query: 'text', x: 1}"), null);
        useBuf(frame, buf -> {
            BsonCursor command = OpQuery.parse(buf).command(buf);
            assertTrue(command.next());
            assertEquals("$query", command.name());
        });
    }

    @Test
    void commandDocumentIsTheWrappedCommandDecodedOrTheQueryItself() {
        byte[] wrapped = opQuery(7, 0, "admin.$cmd", 0, -1,
                bson("{$query: {ismaster: 1, client: {application: {name: 'app'}}}, $readPreference: {mode: 'secondaryPreferred'}}"), null);
        useBuf(wrapped, buf -> assertEquals(BsonDocument.parse("{ismaster: 1, client: {application: {name: 'app'}}}"),
                OpQuery.parse(buf).commandDocument(buf)));
        byte[] plain = opQuery(7, 0, "admin.$cmd", 0, -1, bson("{isMaster: 1, helloOk: true}"), SELECTOR);
        useBuf(plain, buf -> assertEquals(BsonDocument.parse("{isMaster: 1, helloOk: true}"), OpQuery.parse(buf).commandDocument(buf),
                "no wrapper: the query is the command (the selector is no part of it)"));
        byte[] notAWrapper = opQuery(7, 0, "admin.$cmd", 0, -1, bson("{$query: 'text', x: 1}"), null);
        useBuf(notAWrapper, buf -> assertEquals(BsonDocument.parse("{$query: 'text', x: 1}"), OpQuery.parse(buf).commandDocument(buf)));
        byte[] laterQuery = opQuery(7, 0, "admin.$cmd", 0, -1, bson("{count: 'c', $query: {x: 1}}"), null);
        useBuf(laterQuery, buf -> assertEquals(BsonDocument.parse("{count: 'c', $query: {x: 1}}"), OpQuery.parse(buf).commandDocument(buf),
                "only a first field is a wrapper"));
        byte[] empty = opQuery(7, 0, "admin.$cmd", 0, -1, bson("{}"), null);
        useBuf(empty, buf -> assertEquals(new BsonDocument(), OpQuery.parse(buf).commandDocument(buf)));
    }

    @Test
    void parsesAtANonZeroReaderIndex() {
        byte[] frame = opQuery(8, 0, "admin.$cmd", 0, -1, QUERY, SELECTOR);
        ByteBuf buf = ByteBufAllocator.DEFAULT.buffer();
        try {
            buf.writeBytes(new byte[11]).writeBytes(frame).readerIndex(11);
            OpQuery q = OpQuery.parse(buf);
            assertEquals(11 + QUERY_AT, q.queryOffset());
            assertEquals(11 + QUERY_AT + QUERY.length, q.queryEnd());
            assertEquals("isMaster", firstName(q.command(buf)));
        } finally {
            ReferenceCountUtil.release(buf);
        }
    }

    private static String firstName(BsonCursor cursor) {
        assertTrue(cursor.next());
        return cursor.name();
    }

    @Test
    void unterminatedCollectionNameIsRejected() {
        byte[] frame = message(9, 0, WireFixtures.OP_QUERY, concat(le32(0), "admin.$cmd_and_more_text_without_end".getBytes()));
        assertMalformed(frame, OpQuery::parse, "collection name is not terminated");
    }

    @Test
    void theSmallestOpQueryIsAnEmptyNameAndAnEmptyQuery() {
        // flags, "\0", numberToSkip, numberToReturn, {}: 18 bytes after the header, the least the size check lets by
        byte[] frame = message(9, 0, WireFixtures.OP_QUERY, concat(le32(0), bytes(0), le32(0), le32(0), bson("{}")));
        assertEquals(16 + 18, frame.length);
        useBuf(frame, buf -> {
            OpQuery q = OpQuery.parse(buf);
            assertEquals("", q.fullCollectionName());
            assertEquals(frame.length, q.queryEnd());
        });
    }

    @Test
    void tooShortIsRejected() {
        byte[] frame = message(9, 0, WireFixtures.OP_QUERY, concat(le32(0), bytes('a', 0), le32(0), le32(0)));
        assertMalformed(frame, OpQuery::parse, "OP_QUERY too short");
    }

    @Test
    void nameRunningIntoTheEndLeavesNoRoomForTheQuery() {
        // the terminator is the very last byte, so numberToSkip/numberToReturn/query lie past the end
        byte[] frame = message(9, 0, WireFixtures.OP_QUERY, concat(le32(0), "a-long-name-ending-late".getBytes(), bytes(0)));
        assertMalformed(frame, OpQuery::parse, "truncated");
    }

    @Test
    void lyingQueryLengthIsRejected() {
        byte[] frame = opQuery(9, 0, "admin.$cmd", 0, -1, QUERY, null);
        byte[] lying = WireFixtures.patchLe32(frame, QUERY_AT, QUERY.length + 1);
        assertMalformed(lying, OpQuery::parse, "does not fit");
    }

    @Test
    void lyingSelectorIsRejected() {
        byte[] frame = opQuery(9, 0, "admin.$cmd", 0, -1, QUERY, SELECTOR);
        byte[] lying = WireFixtures.patchByte(frame, frame.length - 1, 1);
        assertMalformed(lying, OpQuery::parse, "not terminated by 0x00");
        byte[] partial = concat(opQuery(9, 0, "admin.$cmd", 0, -1, QUERY, bytes(9, 0, 0)));
        assertMalformed(partial, OpQuery::parse, "truncated");
    }
}
