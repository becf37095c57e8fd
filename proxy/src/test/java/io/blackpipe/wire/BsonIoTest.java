package io.blackpipe.wire;

import static io.blackpipe.wire.WireFixtures.assertMalformed;
import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.concat;
import static io.blackpipe.wire.WireFixtures.document;
import static io.blackpipe.wire.WireFixtures.element;
import static io.blackpipe.wire.WireFixtures.le32;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class BsonIoTest {
    private static final BsonDocument DOC = BsonDocument.parse(
            "{hello: 1, client: {application: {name: 'app'}}, compression: ['snappy'], n: {$numberLong: '12'}}");

    @Test
    void encodeProducesTheSameBytesAsRawBsonDocument() {
        assertArrayEquals(bson(DOC), BsonIo.encode(DOC));
    }

    @Test
    void decodeReadsADocumentInsideALargerBuffer() {
        byte[] all = concat(new byte[] {1, 2, 3}, bson(DOC), new byte[] {4, 5});
        WireFixtures.useBuf(all, buf -> assertEquals(DOC, BsonIo.decode(buf, 3, all.length)));
    }

    @Test
    void decodeRejectsALyingLength() {
        byte[] doc = WireFixtures.patchLe32(bson(DOC), 0, bson(DOC).length + 10);
        assertMalformed(doc, b -> BsonIo.decode(b, 0, doc.length), "does not fit");
    }

    @Test
    void decodeTurnsInvalidContentIntoMalformedMessage() {
        // the outer length and terminator are right, the element inside is not valid BSON
        byte[] doc = document(element(0x14, "x", le32(1)));
        assertMalformed(doc, b -> BsonIo.decode(b, 0, doc.length), "invalid BSON document");
        byte[] badString = document(element(0x02, "s", le32(50), new byte[] {'a', 0}));
        assertMalformed(badString, b -> BsonIo.decode(b, 0, badString.length), "invalid BSON document");
    }

    /** A document that decodes but nests deeper than bson writes (a rewritten hello) is malformed, and says why. */
    @Test
    void aDocumentNestedTooDeepToEncodeIsMalformed() {
        BsonDocument deep = new BsonDocument();
        for (int level = 0; level < 100_000; level++) {
            deep = new BsonDocument("a", deep);
        }
        BsonDocument tooDeep = deep;
        MalformedMessageException e = assertThrows(MalformedMessageException.class, () -> BsonIo.encode(tooDeep));
        assertTrue(e.getMessage().contains("depth"), e.getMessage());
    }
}
