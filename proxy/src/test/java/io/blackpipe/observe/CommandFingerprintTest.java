package io.blackpipe.observe;

import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static io.blackpipe.wire.WireFixtures.withBuf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.CommandFingerprint;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.WireFixtures;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.List;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;

/**
 * The fingerprint that read-retry recognition compares: the same command re-sent by a driver must
 * hash the same although its cluster-time gossip moved on, and any real difference must show.
 * Frames are built by hand (WireFixtures), as a driver lays them out.
 */
class CommandFingerprintTest {
    private static final UUID LSID = UUID.fromString("00112233-4455-6677-8899-aabbccddeeff");

    private static long fingerprint(byte[] frame) {
        return withBuf(frame, buf -> CommandFingerprint.of(buf, OpMsg.parse(buf)));
    }

    private static BsonDocument clusterTime(int seconds, int increment) {
        return new BsonDocument("clusterTime", new BsonTimestamp(seconds, increment))
                .append("signature", new BsonDocument("hash", new BsonBinary(new byte[20])).append("keyId", new BsonInt64(0)));
    }

    /** A find as the Java driver sends it in a causally consistent session. */
    private static BsonDocument find(String collection, BsonDocument filter, int clusterSeconds, int clusterIncrement) {
        return new BsonDocument("find", new BsonString(collection))
                .append("filter", filter)
                .append("limit", new BsonInt32(1))
                .append("$db", new BsonString("shop"))
                .append("$clusterTime", clusterTime(clusterSeconds, clusterIncrement))
                .append("lsid", new BsonDocument("id", new BsonBinary(LSID)))
                .append("readConcern", new BsonDocument("afterClusterTime", new BsonTimestamp(clusterSeconds, clusterIncrement)));
    }

    private static byte[] frame(int requestId, BsonDocument body) {
        return opMsg(requestId, 0, 0).body(bson(body)).build();
    }

    @Test
    void aRetriedFindWhoseClusterTimeAndAfterClusterTimeMovedOnHasTheSameFingerprint() {
        BsonDocument filter = BsonDocument.parse("{status: 'open', qty: {$gt: 5}}");
        byte[] first = frame(1, find("orders", filter, 1_700_000_000, 1));
        byte[] retry = frame(2, find("orders", filter, 1_700_000_003, 17));
        assertEquals(fingerprint(first), fingerprint(retry));
    }

    @Test
    void aReadRetriedUnderTimeoutMsWhoseMaxTimeMsShrankHasTheSameFingerprint() {
        // a driver with timeoutMS sends the time left as maxTimeMS, recomputed for every attempt
        BsonDocument filter = BsonDocument.parse("{_id: 1}");
        byte[] first = frame(1, find("orders", filter, 10, 1).append("maxTimeMS", new BsonInt32(14987)));
        byte[] retry = frame(2, find("orders", filter, 10, 2).append("maxTimeMS", new BsonInt32(14980)));
        assertEquals(fingerprint(first), fingerprint(retry));
    }

    @Test
    void theRequestIdAndAChecksumDoNotChangeTheFingerprint() {
        BsonDocument body = find("orders", BsonDocument.parse("{_id: 1}"), 10, 1);
        byte[] plain = opMsg(1, 0, 0).body(bson(body)).build();
        byte[] checksummed = opMsg(99, 0, OpMsg.CHECKSUM_PRESENT).body(bson(body)).build();
        assertEquals(fingerprint(plain), fingerprint(checksummed));
    }

    @Test
    void aDifferentFilterHasADifferentFingerprint() {
        byte[] a = frame(1, find("orders", BsonDocument.parse("{status: 'open'}"), 10, 1));
        byte[] b = frame(2, find("orders", BsonDocument.parse("{status: 'closed'}"), 10, 1));
        assertNotEquals(fingerprint(a), fingerprint(b));
    }

    @Test
    void aDifferentCollectionOrCommandHasADifferentFingerprint() {
        BsonDocument filter = BsonDocument.parse("{_id: 1}");
        long orders = fingerprint(frame(1, find("orders", filter, 10, 1)));
        assertNotEquals(orders, fingerprint(frame(2, find("invoices", filter, 10, 1))));
        BsonDocument count = new BsonDocument("count", new BsonString("orders")).append("query", filter)
                .append("$db", new BsonString("shop"));
        assertNotEquals(orders, fingerprint(frame(3, count)));
    }

    @Test
    void anotherLimitOrOptionHasADifferentFingerprint() {
        BsonDocument filter = BsonDocument.parse("{_id: 1}");
        BsonDocument one = find("orders", filter, 10, 1);
        BsonDocument two = find("orders", filter, 10, 1).append("limit", new BsonInt32(2));
        assertNotEquals(fingerprint(frame(1, one)), fingerprint(frame(2, two)));
    }

    @Test
    void documentsInADocumentSequenceArePartOfTheCommand() {
        // insert/update/delete carry their documents in a kind-1 section (the Java driver always
        // does); two writes without txnNumber (retryWrites=false, updateMany) in the same session
        // are the same command only if those documents are the same
        BsonDocument insert = BsonDocument.parse("{insert: 'orders', ordered: true, $db: 'shop'}")
                .append("lsid", new BsonDocument("id", new BsonBinary(LSID)));
        long first = fingerprint(opMsg(1, 0, 0).body(bson(insert)).sequence("documents", bson("{_id: 1}")).build());
        long again = fingerprint(opMsg(2, 0, 0).body(bson(insert)).sequence("documents", bson("{_id: 1}")).build());
        long other = fingerprint(opMsg(3, 0, 0).body(bson(insert)).sequence("documents", bson("{_id: 2}")).build());
        long more = fingerprint(opMsg(4, 0, 0).body(bson(insert))
                .sequence("documents", bson("{_id: 1}"), bson("{_id: 2}")).build());
        assertEquals(first, again, "the same insert re-sent");
        assertNotEquals(first, other, "another document");
        assertNotEquals(first, more, "more documents");

        BsonDocument update = BsonDocument.parse("{update: 'orders', ordered: true, $db: 'shop'}");
        long updateA = fingerprint(opMsg(5, 0, 0).body(bson(update))
                .sequence("updates", bson("{q: {a: 1}, u: {$inc: {n: 1}}, multi: true}")).build());
        long updateB = fingerprint(opMsg(6, 0, 0).body(bson(update))
                .sequence("updates", bson("{q: {a: 2}, u: {$inc: {n: 1}}, multi: true}")).build());
        assertNotEquals(updateA, updateB);

        // a sequence may also come before the body section
        long before = fingerprint(opMsg(7, 0, 0).sequence("documents", bson("{_id: 1}")).body(bson(insert)).build());
        long beforeOther = fingerprint(opMsg(8, 0, 0).sequence("documents", bson("{_id: 2}")).body(bson(insert)).build());
        assertNotEquals(before, beforeOther);
    }

    @Test
    void sessionFieldsAreNotPartOfTheFingerprint() {
        BsonDocument filter = BsonDocument.parse("{_id: 1}");
        BsonDocument withTxn = find("orders", filter, 10, 1).append("txnNumber", new BsonInt64(3));
        BsonDocument otherLsid = find("orders", filter, 10, 1);
        otherLsid.put("lsid", new BsonDocument("id", new BsonBinary(UUID.randomUUID())));
        long base = fingerprint(frame(1, find("orders", filter, 10, 1)));
        assertEquals(base, fingerprint(frame(2, withTxn)));
        assertEquals(base, fingerprint(frame(3, otherLsid)));
    }

    @Test
    void theFingerprintDoesNotDependOnWhereTheFrameSitsInMemory() {
        // the proxy hashes frames as they arrive: pooled direct buffers deep inside a chunk, slices
        // of a read holding several messages, buffers whose reader index is not 0
        byte[] frame = opMsg(1, 0, 0).body(bson(find("orders", BsonDocument.parse("{_id: 1}"), 10, 1)))
                .sequence("documents", bson("{_id: 1}")).build();
        long expected = fingerprint(frame);
        for (ByteBufAllocator alloc : List.of(PooledByteBufAllocator.DEFAULT, UnpooledByteBufAllocator.DEFAULT)) {
            ByteBuf padding = alloc.directBuffer(1000).writeZero(777); // so the frame is not at the chunk's start
            ByteBuf read = alloc.directBuffer().writeZero(13).writeBytes(frame).writeZero(5);
            ByteBuf heap = alloc.heapBuffer().writeZero(9).writeBytes(frame);
            try {
                read.skipBytes(13);
                ByteBuf slice = read.slice(read.readerIndex(), frame.length);
                assertEquals(expected, CommandFingerprint.of(slice, OpMsg.parse(slice)), alloc + " slice");
                ByteBuf sized = read.copy(read.readerIndex(), frame.length);
                try {
                    assertEquals(expected, CommandFingerprint.of(sized, OpMsg.parse(sized)), alloc + " whole buffer");
                } finally {
                    sized.release();
                }
                heap.skipBytes(9);
                assertEquals(expected, CommandFingerprint.of(heap, OpMsg.parse(heap)), alloc + " heap, reader index 9");
                // a frame in two components (no single NIO view: hashed from copies of its ranges)
                ByteBuf composite = alloc.compositeBuffer().addComponents(true,
                        alloc.heapBuffer().writeBytes(frame, 0, 30), alloc.directBuffer().writeBytes(frame, 30, frame.length - 30));
                try {
                    assertEquals(2, composite.nioBufferCount());
                    assertEquals(expected, CommandFingerprint.of(composite, OpMsg.parse(composite)), alloc + " composite");
                } finally {
                    composite.release();
                }
            } finally {
                padding.release();
                read.release();
                heap.release();
            }
        }
    }

    @Test
    void fixtureSanity() {
        // the fixture really is an OP_MSG with the body first, as drivers send it
        byte[] f = frame(7, find("orders", BsonDocument.parse("{}"), 1, 1));
        assertEquals(WireFixtures.OP_MSG, WireFixtures.readLe32(f, 12));
    }
    /**
     * The fingerprint hashes the kept body elements run by run; it must equal hashing them one by
     * one (the definition), wherever the left-out fields stand: first, in a row, last, or nowhere.
     */
    /** {find: 'c', k0: 0, maxTimeMS: 0, k1: 1, maxTimeMS: 1, ...}: as many runs as asked, which no BsonDocument can hold. */
    private static byte[] manyRuns(int runs) {
        List<byte[]> elements = new java.util.ArrayList<>();
        elements.add(WireFixtures.element(0x02, "find", WireFixtures.stringValue("c")));
        for (int i = 0; i < runs; i++) {
            elements.add(WireFixtures.element(0x10, "k" + i, WireFixtures.le32(i)));
            elements.add(WireFixtures.element(0x10, "maxTimeMS", WireFixtures.le32(i)));
        }
        return WireFixtures.document(elements.toArray(new byte[0][]));
    }

    @Test
    void hashingKeptElementsInRunsEqualsHashingThemOneByOne() {
        List<String> bodies = List.of(
                "{find: 'c', filter: {a: 1}, limit: 1, $db: 'shop'}",
                "{lsid: {id: 1}, find: 'c', filter: {a: 1}, $db: 'shop'}",
                "{find: 'c', $clusterTime: {t: 1}, lsid: {id: 1}, filter: {a: 1}, readConcern: {level: 'local'}, $db: 'shop'}",
                "{find: 'c', filter: {a: 1}, $db: 'shop', maxTimeMS: 5, txnNumber: 3}",
                "{$clusterTime: {t: 1}, lsid: {id: 1}, maxTimeMS: 5}",
                "{find: 'c', a: 1, maxTimeMS: 1, b: 2, readConcern: {}, c: 3, lsid: {id: 1}, d: 4, $clusterTime: {}, e: 5}");
        List<byte[]> frames = new java.util.ArrayList<>();
        for (String json : bodies) {
            frames.add(frame(7, BsonDocument.parse(json)));
        }
        frames.add(opMsg(8, 0, 0).body(manyRuns(12)).build());
        for (byte[] frame : frames) {
            String json = "frame " + frames.indexOf(frame);
            long expected = withBuf(frame, buf -> {
                OpMsg msg = OpMsg.parse(buf);
                java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
                io.blackpipe.wire.BsonCursor body = msg.body(buf);
                while (body.next()) {
                    if (!List.of("$clusterTime", "readConcern", "lsid", "txnNumber", "maxTimeMS").contains(body.name())) {
                        byte[] element = new byte[body.valueEnd() - body.elementOffset()];
                        buf.getBytes(body.elementOffset(), element);
                        crc.update(element);
                    }
                }
                return crc.getValue(); // no kind-1 sections in these frames
            });
            assertEquals(expected, fingerprint(frame), json);
        }
    }

    /**
     * The proxy takes the fingerprint from the request's one scan (CommandFacts), not from a walk
     * of its own: both must give the same value, for bodies of one run and of many, with document
     * sequences before or after the body, and none for a command without a session or with a txnNumber.
     */
    @Test
    void theRequestScanGivesTheWalksFingerprint() {
        BsonDocument lsid = new BsonDocument("id", new BsonBinary(LSID));
        List<BsonDocument> bodies = List.of(
                find("orders", BsonDocument.parse("{status: 'open'}"), 10, 1),
                BsonDocument.parse("{find: 'c', filter: {a: 1}, limit: 1, $db: 'shop'}").append("lsid", lsid),
                new BsonDocument("find", new BsonString("c")).append("lsid", lsid).append("$db", new BsonString("shop")),
                BsonDocument.parse("{aggregate: 'c', pipeline: [], $clusterTime: {t: 1}, cursor: {}, readConcern: {}, "
                        + "a: 1, maxTimeMS: 5, b: 2, $readPreference: {mode: 'primary'}, $db: 'shop'}").append("lsid", lsid)
                        .append("c", new BsonInt32(3)),
                BsonDocument.parse("{insert: 'c', ordered: true, $db: 'shop'}").append("lsid", lsid));
        for (BsonDocument body : bodies) {
            for (byte[] frame : List.of(frame(3, body),
                    opMsg(4, 0, 0).body(bson(body)).sequence("documents", bson("{_id: 1}")).build(),
                    opMsg(5, 0, 0).sequence("documents", bson("{_id: 2}")).body(bson(body)).build())) {
                withBuf(frame, buf -> {
                    OpMsg msg = OpMsg.parse(buf);
                    long scanned = CommandFacts.ofOpMsg(buf, msg).fingerprint();
                    assertEquals(CommandFingerprint.of(buf, msg), scanned, body.toJson());
                    assertNotEquals(0, scanned, body.toJson());
                    return null;
                });
            }
        }
        BsonDocument withoutSession = BsonDocument.parse("{find: 'c', filter: {a: 1}, $db: 'shop'}");
        BsonDocument retryableWrite = BsonDocument.parse("{insert: 'c', txnNumber: {$numberLong: '1'}, $db: 'shop'}")
                .append("lsid", lsid);
        for (BsonDocument body : List.of(withoutSession, retryableWrite)) {
            assertEquals(0L, (long) withBuf(frame(6, body), buf -> CommandFacts.ofOpMsg(buf, OpMsg.parse(buf)).fingerprint()),
                    body.toJson() + ": its retries are recognised without a fingerprint, or not at all");
        }
    }
}
