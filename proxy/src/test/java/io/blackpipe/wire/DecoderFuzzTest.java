package io.blackpipe.wire;

import static io.blackpipe.wire.WireFixtures.bytesOf;
import static io.blackpipe.wire.WireFixtures.concat;
import static io.blackpipe.wire.WireFixtures.le32;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.function.Supplier;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDbPointer;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonJavaScript;
import org.bson.BsonJavaScriptWithScope;
import org.bson.BsonMaxKey;
import org.bson.BsonMinKey;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonRegularExpression;
import org.bson.BsonString;
import org.bson.BsonSymbol;
import org.bson.BsonTimestamp;
import org.bson.BsonUndefined;
import org.bson.BsonValue;
import org.bson.UuidRepresentation;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * Property-style fuzzing of the wire decoding: random valid messages of every opcode (OP_MSG with a
 * body and document sequences, with and without checksum and moreToCome; OP_QUERY with and without
 * a $query wrapper and a field selector; OP_REPLY; OP_COMPRESSED headers) are
 * <ul>
 * <li>decoded unmutated: the {@link FrameDecoder} passes each through byte for byte, whatever the
 *     chunking, and the opcode's view parses it and reads the facts the generator put in;</li>
 * <li>mutated (flipped bytes, random int32 over a length, truncation, trailing garbage, bad header
 *     length, bad section kind, bad BSON length, bad checksum, two messages spliced) and thrown at
 *     the decoder in an {@link EmbeddedChannel} and at every parser (OpMsg, OpQuery, OpReply,
 *     CommandFacts, ReplyFacts, a full recursive {@link BsonCursor} walk): the only exception that
 *     may escape is {@link MalformedMessageException} (wrapped in a DecoderException by Netty), and
 *     every buffer is released (the input's refCnt is checked; the leak detector runs PARANOID).</li>
 * </ul>
 * The seed is printed and named in every failure; rerun one with -Dblackpipe.fuzz.seed=N. Default
 * 20,000 cases; -Dblackpipe.fuzz.minutes=M runs for M minutes instead.
 */
public class DecoderFuzzTest {
    private static final io.netty.buffer.ByteBufAllocator UNTRACKED = new io.netty.buffer.UnpooledByteBufAllocator(false, true);
    private static final String[] COMMANDS = {"insert", "find", "update", "delete", "getMore", "aggregate", "hello",
        "isMaster", "ping", "killCursors", "endSessions", "count", "saslStart"};

    @Test
    void validMessagesDecodeAndMutatedOnesOnlyRaiseMalformed() {
        long seed = Long.getLong("blackpipe.fuzz.seed", System.nanoTime());
        double minutes = Double.parseDouble(System.getProperty("blackpipe.fuzz.minutes", "0"));
        long deadline = minutes > 0 ? System.nanoTime() + (long) (minutes * 60e9) : Long.MAX_VALUE;
        int cases = minutes > 0 ? Integer.MAX_VALUE : Integer.getInteger("blackpipe.fuzz.cases", 20_000);
        System.out.println("DecoderFuzzTest seed=" + seed + " (rerun with -Dblackpipe.fuzz.seed=" + seed + ")");
        Random seeds = new Random(seed);
        int rejected = 0;
        int ran = 0;
        for (int i = 0; i < cases && System.nanoTime() < deadline; i++) {
            long caseSeed = seeds.nextLong();
            Random random = new Random(caseSeed);
            Generated valid = message(random);
            byte[] bytes = valid.bytes;
            String mutation = "(mutating)";
            try {
                if (random.nextInt(8) == 0) {
                    mutation = "none";
                    checkValid(valid, random);
                } else {
                    mutation = mutate(valid, random);
                    bytes = valid.bytes;
                    if (throwAtDecoder(bytes, random)) {
                        rejected++;
                    }
                }
            } catch (Throwable t) {
                throw new AssertionError("DecoderFuzzTest seed=" + seed + " case " + i + " (case seed " + caseSeed
                        + ", " + valid.kind + ", mutation " + mutation + "): " + t + "\nbytes: " + hex(bytes), t);
            }
            ran++;
        }
        System.out.println("DecoderFuzzTest ran " + ran + " cases, " + rejected + " rejected as malformed");
        assertTrue(rejected > ran / 10, "the mutations should be rejected often; only " + rejected + " of " + ran);
    }

    // ---------------------------------------------------------------- properties

    /** An unmutated message is framed byte for byte in any chunking, and its view parses it. */
    private static void checkValid(Generated valid, Random random) {
        List<byte[]> frames = new ArrayList<>();
        byte[] twice = concat(valid.bytes, valid.bytes);
        EmbeddedChannel channel = new EmbeddedChannel(new FrameDecoder());
        List<ByteBuf> inputs = new ArrayList<>();
        try {
            for (byte[] chunk : chunks(twice, random)) {
                ByteBuf in = WireFixtures.buf(chunk);
                inputs.add(in);
                channel.writeInbound(in);
                drain(channel, frames);
            }
            assertEquals(2, frames.size(), "two whole messages must come out");
            for (byte[] frame : frames) {
                assertArrayEquals(valid.bytes, frame, "a frame must be forwarded byte for byte");
            }
        } finally {
            channel.finishAndReleaseAll();
        }
        for (ByteBuf in : inputs) {
            assertEquals(0, in.refCnt(), "the decoder must release what it was given");
        }
        ByteBuf validFrame = Unpooled.wrappedBuffer(valid.bytes);
        java.util.function.Consumer<ByteBuf> views = frame -> {
            switch (valid.opCode) {
                case WireFixtures.OP_MSG -> {
                    OpMsg msg = OpMsg.parse(frame);
                    assertEquals(valid.flags, msg.flags());
                    CommandFacts facts = CommandFacts.ofOpMsg(frame, msg);
                    assertEquals(valid.command, facts.name());
                    assertEquals(valid.database, facts.database());
                    assertEquals(valid.lsid, facts.lsid());
                    ReplyFacts reply = ReplyFacts.of(frame);
                    assertEquals((valid.flags & OpMsg.MORE_TO_COME) != 0, reply.moreToCome());
                    walk(msg.body(frame), 0, new StringBuilder());
                }
                case WireFixtures.OP_QUERY -> {
                    OpQuery query = OpQuery.parse(frame);
                    CommandFacts facts = CommandFacts.ofOpQuery(frame, query);
                    assertEquals(valid.command, facts.name());
                    assertEquals(valid.database, facts.database());
                    walk(query.command(frame), 0, new StringBuilder());
                }
                case WireFixtures.OP_REPLY -> {
                    OpReply reply = OpReply.parse(frame);
                    assertEquals(valid.documents, reply.numberReturned());
                    ReplyFacts.of(frame);
                }
                default -> ReplyFacts.of(frame);
            }
        };
        views.accept(validFrame);
    }

    /**
     * Feeds {@code bytes} to a fresh decoder in random chunks, then runs every parser over every
     * frame that comes out. Returns true when something was rejected as malformed.
     */
    private static boolean throwAtDecoder(byte[] bytes, Random random) {
        boolean rejected = false;
        List<ByteBuf> inputs = new ArrayList<>();
        List<byte[]> frames = new ArrayList<>();
        EmbeddedChannel channel = new EmbeddedChannel(new FrameDecoder(random.nextBoolean() ? Frames.MAX_MESSAGE_SIZE : 4096));
        // One case in eight runs on leak-tracked buffers (PARANOID records a stack trace on every access,
        // which would make it the whole cost of the run); the others on untracked ones, where the refCnt
        // checks below still catch a buffer the decoder keeps.
        boolean tracked = random.nextInt(8) == 0;
        if (!tracked) {
            channel.config().setAllocator(UNTRACKED);
        }
        try {
            for (byte[] chunk : chunks(bytes, random)) {
                ByteBuf in = tracked ? WireFixtures.buf(chunk) : UNTRACKED.heapBuffer(chunk.length).writeBytes(chunk);
                inputs.add(in);
                try {
                    channel.writeInbound(in);
                } catch (DecoderException e) {
                    assertMalformedCause(e);
                    rejected = true;
                }
                drain(channel, frames);
            }
            try {
                channel.finish(); // decodeLast on a partial frame: a TruncatedFrame event, never an exception
            } catch (DecoderException e) {
                assertMalformedCause(e);
                rejected = true;
            }
            drain(channel, frames);
        } finally {
            channel.finishAndReleaseAll();
        }
        for (ByteBuf in : inputs) {
            assertEquals(0, in.refCnt(), "the decoder must release every buffer it was given");
        }
        for (byte[] frame : frames) {
            rejected |= parseEverything(frame);
        }
        return rejected;
    }

    private static void assertMalformedCause(DecoderException e) {
        if (!(e.getCause() instanceof MalformedMessageException)) {
            throw new AssertionError("the decoder raised something other than MalformedMessageException", e);
        }
    }

    /**
     * Every view on one framed message (its length field is its size); true if any rejected it. Run
     * twice: on a heap buffer, read through ByteBuf's checked accessors, and on a direct one, whose
     * memory BsonCursor reads itself (where the platform allows): both must read the same values
     * and reject the same frames with the same message.
     */
    private static boolean parseEverything(byte[] frameBytes) {
        List<String> onHeap = readEverything(frameBytes, UNTRACKED.heapBuffer(frameBytes.length + 7));
        List<String> onDirect = readEverything(frameBytes, UNTRACKED.directBuffer(frameBytes.length + 7));
        assertEquals(onHeap, onDirect, "a direct buffer must read as a heap buffer does");
        return onHeap.stream().anyMatch(read -> read.startsWith("malformed"));
    }

    /** What each parser read from the frame, or why it rejected it; {@code holder} is released. */
    private static List<String> readEverything(byte[] frameBytes, ByteBuf holder) {
        List<String> reads = new ArrayList<>();
        // Frames are slices at a non-zero reader index in the proxy; do the same here. Untracked buffers:
        // the leak detector (PARANOID records a stack trace on every access) would make the parsers'
        // many reads the whole cost of the run; buffers the decoder makes are tracked.
        try {
            holder.writeZero(7).writeBytes(frameBytes).readerIndex(7);
            ByteBuf frame = holder;
            reads.add(read(() -> {
                OpMsg msg = OpMsg.parse(frame);
                StringBuilder read = new StringBuilder("msg " + msg.moreToCome() + " ");
                walk(msg.body(frame), 0, read);
                // read twice by one scanner: the second time it reuses its runs and session id, and finds its names again
                CommandScanner scanner = new CommandScanner();
                read.append(' ').append(scanner.ofOpMsg(frame, msg));
                return read.append(' ').append(scanner.ofOpMsg(frame, msg)).toString();
            }));
            reads.add(decoded(() -> {
                OpMsg msg = OpMsg.parse(frame);
                return BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd()); // what rewrites decode
            }));
            reads.add(read(() -> {
                OpQuery query = OpQuery.parse(frame);
                StringBuilder read = new StringBuilder("query " + query.database() + " ");
                walk(query.command(frame), 0, read);
                return read.append(' ').append(CommandFacts.ofOpQuery(frame, query)).toString();
            }));
            reads.add(decoded(() -> {
                OpQuery query = OpQuery.parse(frame);
                return BsonIo.decode(frame, query.queryOffset(), query.queryEnd());
            }));
            reads.add(read(() -> {
                OpReply reply = OpReply.parse(frame);
                StringBuilder read = new StringBuilder("reply " + reply.numberReturned() + " ");
                if (reply.numberReturned() > 0) {
                    walk(BsonCursor.over(frame, reply.firstDocumentOffset(), reply.end()), 0, read);
                }
                return read.toString();
            }));
            reads.add(decoded(() -> {
                OpReply reply = OpReply.parse(frame);
                return reply.numberReturned() > 0 ? BsonIo.decode(frame, reply.firstDocumentOffset(), reply.end()) : null;
            }));
            reads.add(read(() -> ReplyFacts.of(frame).toString()));
            assertEquals(7, frame.readerIndex(), "parsing must not move the reader index");
        } finally {
            ReferenceCountUtil.release(holder);
        }
        return reads;
    }

    /** The bson library's decoding: its messages differ between heap and direct input, so only the verdict is kept. */
    private static String decoded(Supplier<BsonDocument> decode) {
        try {
            return String.valueOf(decode.get());
        } catch (MalformedMessageException e) {
            return "malformed";
        }
    }

    private static String read(Supplier<String> parse) {
        try {
            return parse.get();
        } catch (MalformedMessageException e) {
            return "malformed: " + e.getMessage();
        }
    }

    /** Reads every element the way decisions do, recursing into documents and arrays, and notes what it read. */
    private static void walk(BsonCursor cursor, int depth, StringBuilder read) {
        read.append('{');
        while (cursor.next()) {
            read.append(cursor.type()).append(' ').append(cursor.name()).append(cursor.nameIs("$db") ? " $db" : "")
                    .append('@').append(cursor.elementOffset()).append(':');
            switch (cursor.type()) {
                case BsonCursor.STRING -> read.append(cursor.stringValue());
                case BsonCursor.BOOLEAN -> read.append(cursor.booleanValue());
                case BsonCursor.INT32, BsonCursor.INT64, BsonCursor.DOUBLE ->
                        read.append(cursor.longValue()).append('/').append(cursor.doubleValue());
                case BsonCursor.DOCUMENT, BsonCursor.ARRAY -> {
                    if (depth < 20) {
                        walk(cursor.documentValue(), depth + 1, read);
                    }
                }
                default -> read.append(cursor.valueEnd());
            }
            read.append(',');
        }
        read.append('}');
    }

    private static void drain(EmbeddedChannel channel, List<byte[]> frames) {
        Object o;
        while ((o = channel.readInbound()) != null) {
            if (o instanceof ByteBuf b) {
                frames.add(bytesOf(b));
            }
            ReferenceCountUtil.release(o);
        }
    }

    private static List<byte[]> chunks(byte[] bytes, Random random) {
        List<byte[]> out = new ArrayList<>();
        if (random.nextInt(3) == 0 || bytes.length < 2) {
            out.add(bytes);
            return out;
        }
        int pos = 0;
        while (pos < bytes.length) {
            int n = Math.min(bytes.length - pos, 1 + random.nextInt(random.nextBoolean() ? 8 : Math.max(1, bytes.length)));
            out.add(Arrays.copyOfRange(bytes, pos, pos + n));
            pos += n;
        }
        return out;
    }

    // ---------------------------------------------------------------- generation

    /** A generated message and what it was built from (the facts a parser must find). */
    public static final class Generated {
        public String kind;
        public int opCode;
        int flags;
        String command;
        String database;
        UUID lsid;
        int documents;
        public byte[] bytes;
        /** Offsets of BSON document length prefixes, of section kind bytes, and of the checksum (-1). */
        final List<Integer> bsonOffsets = new ArrayList<>();
        final List<Integer> sectionOffsets = new ArrayList<>();
        int checksumOffset = -1;
    }

    public static Generated message(Random random) {
        return switch (random.nextInt(10)) {
            case 0, 1, 2, 3, 4, 5 -> opMsg(random);
            case 6, 7 -> opQuery(random);
            case 8 -> opReply(random);
            default -> opCompressed(random);
        };
    }

    static Generated opMsg(Random random) {
        Generated g = new Generated();
        g.kind = "OP_MSG";
        g.opCode = WireFixtures.OP_MSG;
        g.flags = (random.nextBoolean() ? OpMsg.CHECKSUM_PRESENT : 0) | (random.nextInt(4) == 0 ? OpMsg.MORE_TO_COME : 0)
                | (random.nextInt(4) == 0 ? OpMsg.EXHAUST_ALLOWED : 0);
        g.command = COMMANDS[random.nextInt(COMMANDS.length)];
        g.database = "db" + random.nextInt(5);
        g.lsid = random.nextBoolean() ? new UUID(random.nextLong(), random.nextLong()) : null;
        byte[] body = WireFixtures.bson(command(random, g.command, g.database, g.lsid));
        List<byte[]> sections = new ArrayList<>();
        int sequences = random.nextInt(4);
        int bodyAt = random.nextInt(sequences + 1);
        int offset = 20;
        for (int s = 0; s <= sequences; s++) {
            byte[] section;
            g.sectionOffsets.add(offset);
            if (s == bodyAt) {
                g.bsonOffsets.add(offset + 1);
                section = concat(new byte[] {0}, body);
            } else {
                byte[] id = WireFixtures.cstring(random.nextBoolean() ? "documents" : "updates");
                List<byte[]> docs = new ArrayList<>();
                int docStart = offset + 5 + id.length;
                for (int d = random.nextInt(4); d > 0; d--) {
                    byte[] doc = WireFixtures.bson(randomDocument(random, 2));
                    g.bsonOffsets.add(docStart);
                    docStart += doc.length;
                    docs.add(doc);
                }
                byte[] docBytes = concat(docs.toArray(new byte[0][]));
                g.bsonOffsets.add(offset + 1); // the sequence size is a length too
                section = concat(new byte[] {1}, le32(4 + id.length + docBytes.length), id, docBytes);
            }
            sections.add(section);
            offset += section.length;
        }
        WireFixtures.OpMsgBuilder builder = WireFixtures.opMsg(random.nextInt(), random.nextInt(), g.flags);
        sections.forEach(builder::raw);
        g.bytes = builder.build();
        if ((g.flags & OpMsg.CHECKSUM_PRESENT) != 0) {
            g.checksumOffset = g.bytes.length - 4;
        }
        return g;
    }

    static Generated opQuery(Random random) {
        Generated g = new Generated();
        g.kind = "OP_QUERY";
        g.opCode = WireFixtures.OP_QUERY;
        g.command = random.nextBoolean() ? "isMaster" : COMMANDS[random.nextInt(COMMANDS.length)];
        g.database = random.nextBoolean() ? "admin" : "db" + random.nextInt(5);
        BsonDocument command = command(random, g.command, null, null);
        BsonDocument query = random.nextBoolean() ? command
                : new BsonDocument("$query", command).append("$readPreference", new BsonDocument("mode", new BsonString("primary")));
        byte[] queryBytes = WireFixtures.bson(query);
        byte[] selector = random.nextBoolean() ? WireFixtures.bson(randomDocument(random, 1)) : null;
        String ns = g.database + ".$cmd";
        g.bytes = WireFixtures.opQuery(random.nextInt(), random.nextInt(8) << 1, ns, 0, -1, queryBytes, selector);
        int queryAt = 16 + 4 + ns.length() + 1 + 8;
        g.bsonOffsets.add(queryAt);
        if (selector != null) {
            g.bsonOffsets.add(queryAt + queryBytes.length);
        }
        return g;
    }

    static Generated opReply(Random random) {
        Generated g = new Generated();
        g.kind = "OP_REPLY";
        g.opCode = WireFixtures.OP_REPLY;
        g.documents = random.nextInt(4);
        byte[][] docs = new byte[g.documents][];
        int at = 16 + 20;
        for (int d = 0; d < g.documents; d++) {
            BsonDocument doc = randomDocument(random, 2);
            if (d == 0) {
                doc.append("ok", random.nextBoolean() ? new BsonDouble(1) : new BsonInt32(0));
                if (random.nextBoolean()) {
                    doc.append("code", new BsonInt32(random.nextInt(20000)));
                }
            }
            docs[d] = WireFixtures.bson(doc);
            g.bsonOffsets.add(at);
            at += docs[d].length;
        }
        g.bytes = WireFixtures.opReply(random.nextInt(), random.nextInt(), random.nextInt(16), random.nextLong(), 0,
                g.documents, docs);
        return g;
    }

    /** OP_COMPRESSED: only its header is checked by the proxy; the payload here is random bytes. */
    static Generated opCompressed(Random random) {
        Generated g = new Generated();
        g.kind = "OP_COMPRESSED";
        g.opCode = WireFixtures.OP_COMPRESSED;
        byte[] payload = new byte[random.nextInt(64)];
        random.nextBytes(payload);
        int[] originals = {WireFixtures.OP_MSG, WireFixtures.OP_QUERY, WireFixtures.OP_REPLY};
        g.bytes = WireFixtures.message(random.nextInt(), random.nextInt(), WireFixtures.OP_COMPRESSED,
                concat(le32(originals[random.nextInt(3)]), le32(random.nextInt(1 << 20)), new byte[] {(byte) random.nextInt(4)}, payload));
        return g;
    }

    /** A command document: name first, then the fields the proxy reads, then random fields. */
    public static BsonDocument command(Random random, String name, String database, UUID lsid) {
        BsonDocument command = new BsonDocument(name, random.nextBoolean() ? new BsonString("c" + random.nextInt(3)) : new BsonInt32(1));
        BsonDocument extra = randomDocument(random, 2);
        for (String key : extra.keySet()) {
            if (!key.equals(name)) {
                command.append(key, extra.get(key));
            }
        }
        if (lsid != null) {
            command.append("lsid", new BsonDocument("id", new BsonBinary(lsid, UuidRepresentation.STANDARD)));
        }
        if (random.nextBoolean()) {
            command.append("txnNumber", new BsonInt64(random.nextInt(1000)));
        }
        if (random.nextInt(4) == 0) {
            command.append("autocommit", BsonBoolean.FALSE);
        }
        if (CommandFacts.isHelloName(name) && random.nextBoolean()) {
            command.append("client", new BsonDocument("application", new BsonDocument("name", new BsonString("app" + random.nextInt(9)))));
            command.append("compression", new BsonArray(List.of(new BsonString("zstd"))));
        }
        if (database != null) {
            command.append("$db", new BsonString(database));
        }
        return command;
    }

    public static BsonDocument randomDocument(Random random, int depth) {
        BsonDocument doc = new BsonDocument();
        for (int n = random.nextInt(6); n > 0; n--) {
            doc.append("f" + random.nextInt(1000), randomValue(random, depth));
        }
        return doc;
    }

    public static BsonValue randomValue(Random random, int depth) {
        int type = random.nextInt(depth > 0 ? 21 : 19);
        return switch (type) {
            case 0 -> new BsonDouble(random.nextDouble());
            case 1 -> new BsonString(randomString(random));
            case 2 -> new BsonBinary((byte) random.nextInt(8), randomBytes(random));
            case 3 -> BsonBoolean.valueOf(random.nextBoolean());
            case 4 -> new BsonInt32(random.nextInt());
            case 5 -> new BsonInt64(random.nextLong());
            case 6 -> new BsonObjectId(new ObjectId());
            case 7 -> new BsonDateTime(random.nextLong());
            case 8 -> BsonNull.VALUE;
            case 9 -> new BsonUndefined();
            case 10 -> new BsonRegularExpression(randomString(random), random.nextBoolean() ? "i" : "");
            case 11 -> new BsonDbPointer("db.c", new ObjectId());
            case 12 -> new BsonJavaScript("function(){}");
            case 13 -> new BsonSymbol("s" + random.nextInt(9));
            case 14 -> new BsonJavaScriptWithScope("x", new BsonDocument("a", new BsonInt32(1)));
            case 15 -> new BsonTimestamp(random.nextLong());
            case 16 -> new BsonDecimal128(new Decimal128(random.nextInt()));
            case 17 -> new BsonMinKey();
            case 18 -> new BsonMaxKey();
            case 19 -> randomDocument(random, depth - 1);
            default -> {
                BsonArray array = new BsonArray();
                for (int n = random.nextInt(4); n > 0; n--) {
                    array.add(randomValue(random, depth - 1));
                }
                yield array;
            }
        };
    }

    private static String randomString(Random random) {
        StringBuilder s = new StringBuilder();
        for (int n = random.nextInt(12); n > 0; n--) {
            s.append(random.nextInt(10) == 0 ? (char) (0x80 + random.nextInt(0x700)) : (char) ('a' + random.nextInt(26)));
        }
        return s.toString();
    }

    private static byte[] randomBytes(Random random) {
        byte[] b = new byte[random.nextInt(20)];
        random.nextBytes(b);
        return b;
    }

    // ---------------------------------------------------------------- mutation

    /** Mutates {@code g.bytes} in place (one to three mutations); returns their names. */
    public static String mutate(Generated g, Random random) {
        StringBuilder names = new StringBuilder();
        for (int n = 1 + (random.nextInt(4) == 0 ? random.nextInt(3) : 0); n > 0; n--) {
            names.append(names.length() == 0 ? "" : "+").append(mutateOnce(g, random));
        }
        return names.toString();
    }

    private static String mutateOnce(Generated g, Random random) {
        byte[] b = g.bytes;
        switch (random.nextInt(11)) {
            case 0: {
                int flips = 1 + random.nextInt(4);
                for (int i = 0; i < flips && b.length > 0; i++) {
                    b[random.nextInt(b.length)] ^= (byte) (1 << random.nextInt(8));
                }
                return "flip" + flips;
            }
            case 1: {
                if (b.length >= 4) {
                    int at = random.nextInt(b.length - 3);
                    g.bytes = WireFixtures.patchLe32(b, at, interestingInt(random, b.length));
                }
                return "int32";
            }
            case 2:
                g.bytes = Arrays.copyOf(b, random.nextInt(b.length + 1));
                return "truncate";
            case 3: {
                byte[] garbage = new byte[1 + random.nextInt(40)];
                random.nextBytes(garbage);
                g.bytes = concat(b, garbage);
                return "append";
            }
            case 4:
                if (b.length >= 4) {
                    g.bytes = WireFixtures.patchLe32(b, 0, interestingInt(random, b.length));
                }
                return "headerLength";
            case 5: {
                if (g.sectionOffsets.isEmpty()) {
                    return mutateOnce(g, random);
                }
                int at = g.sectionOffsets.get(random.nextInt(g.sectionOffsets.size()));
                if (at >= b.length) {
                    return "sectionKind(gone)";
                }
                g.bytes = WireFixtures.patchByte(b, at, random.nextBoolean() ? 2 + random.nextInt(254) : 1 - b[at]);
                return "sectionKind";
            }
            case 6: {
                if (g.bsonOffsets.isEmpty()) {
                    return mutateOnce(g, random);
                }
                int at = g.bsonOffsets.get(random.nextInt(g.bsonOffsets.size()));
                if (at + 4 > b.length) {
                    return "bsonLength(gone)";
                }
                int old = WireFixtures.readLe32(b, at);
                int value = switch (random.nextInt(4)) {
                    case 0 -> old + 1 + random.nextInt(8);
                    case 1 -> old - 1 - random.nextInt(8);
                    case 2 -> random.nextInt(6);
                    default -> interestingInt(random, b.length);
                };
                g.bytes = WireFixtures.patchLe32(b, at, value);
                return "bsonLength";
            }
            case 7: {
                if (b.length < 20) {
                    return "checksum(gone)";
                }
                if (g.checksumOffset < 0 || g.checksumOffset + 4 > b.length) {
                    g.bytes = WireFixtures.patchLe32(b, 16, WireFixtures.readLe32(b, 16) ^ OpMsg.CHECKSUM_PRESENT);
                    return "checksumFlag";
                }
                g.bytes = WireFixtures.patchLe32(b, g.checksumOffset, WireFixtures.readLe32(b, g.checksumOffset) ^ (1 << random.nextInt(32)));
                return "checksum";
            }
            case 8: {
                Generated other = message(random);
                g.bytes = concat(Arrays.copyOf(b, random.nextInt(b.length + 1)), other.bytes);
                return "splice";
            }
            case 9: {
                // flags: unknown required bits, or a random word
                if (b.length >= 20) {
                    g.bytes = WireFixtures.patchLe32(b, 16, random.nextBoolean() ? 1 << random.nextInt(16) : random.nextInt());
                }
                return "flags";
            }
            default: {
                // opcode of another kind over the same body
                int[] ops = {1, 2004, 2012, 2013, 2010, 0, -1};
                if (b.length >= 16) {
                    g.bytes = WireFixtures.patchLe32(b, 12, ops[random.nextInt(ops.length)]);
                }
                return "opcode";
            }
        }
    }

    private static int interestingInt(Random random, int length) {
        return switch (random.nextInt(8)) {
            case 0 -> 0;
            case 1 -> -1;
            case 2 -> Integer.MAX_VALUE;
            case 3 -> Integer.MIN_VALUE;
            case 4 -> length + random.nextInt(9) - 4;
            case 5 -> random.nextInt(Math.max(1, length));
            case 6 -> 48_000_001;
            default -> random.nextInt();
        };
    }

    private static String hex(byte[] bytes) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < Math.min(bytes.length, 512); i++) {
            s.append(String.format("%02x", bytes[i] & 0xFF));
        }
        return bytes.length > 512 ? s + "..." : s.toString();
    }
}
