package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import java.nio.ByteOrder;
import org.bson.BsonBinaryReader;
import org.bson.BsonDocument;
import org.bson.BsonSerializationException;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.DecoderContext;

/** Whole-document decoding and encoding, for the few messages the proxy rewrites or builds. */
public final class BsonIo {
    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();

    private BsonIo() {
    }

    public static BsonDocument decode(ByteBuf buf, int offset, int limit) {
        int length = BsonCursor.checkedLength(buf, offset, limit);
        try (BsonBinaryReader reader = new BsonBinaryReader(buf.nioBuffer(offset, length).order(ByteOrder.LITTLE_ENDIAN))) {
            return CODEC.decode(reader, DecoderContext.builder().build());
        } catch (BsonSerializationException | org.bson.BsonInvalidOperationException e) {
            throw new MalformedMessageException("invalid BSON document: " + e.getMessage());
        } catch (StackOverflowError e) { // the codec recurses per level: the stack unwinds to here, nothing half-done
            throw new MalformedMessageException("invalid BSON document: nested too deep to decode (mongod takes 200 levels at most)");
        }
    }

    public static byte[] encode(BsonDocument document) {
        RawBsonDocument raw;
        try {
            raw = new RawBsonDocument(document, CODEC);
        } catch (BsonSerializationException e) { // a request that decoded but nests deeper than bson writes (1024 levels)
            throw new MalformedMessageException("invalid BSON document: " + e.getMessage());
        }
        org.bson.ByteBuf bytes = raw.getByteBuffer();
        byte[] out = new byte[bytes.remaining()];
        bytes.get(out);
        return out;
    }
}
