package io.blackpipe.fault;

import java.io.IOException;
import java.io.StringReader;
import java.util.Locale;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.codecs.BsonValueCodec;
import org.bson.codecs.DecoderContext;
import org.bson.json.JsonParseException;
import org.bson.json.JsonReader;

/**
 * One JSON document and nothing after it. {@link BsonDocument#parse} stops at the end of the first
 * document and ignores the rest, so two rules pasted one after the other would add only the first.
 */
public final class JsonDocuments {
    private static final BsonValueCodec VALUES = new BsonValueCodec();
    private JsonDocuments() {
    }

    /**
     * @throws JsonParseException when the text is not JSON, is JSON but not a document, or has anything but white
     *                            space after the document
     */
    public static BsonDocument parseOne(String json) {
        CountingReader source = new CountingReader(json);
        BsonDocument document;
        try (JsonReader reader = new JsonReader(source)) {
            // the codec's own complaint about an array names its reader's states ("readStartDocument can only be called ...")
            BsonType type = reader.readBsonType();
            if (type != BsonType.DOCUMENT) {
                throw new JsonParseException(kind(type) + " where one document {...} was expected");
            }
            document = readDocument(reader, "");
        }
        String rest = json.substring(source.read).strip();
        if (!rest.isEmpty()) {
            throw new JsonParseException("trailing content after the document: '"
                    + (rest.length() > 40 ? rest.substring(0, 40) + "..." : rest) + "' (one document only)");
        }
        return document;
    }

    /**
     * A document, each field once: a field given twice would otherwise keep its last value, silently, where mongod
     * takes the first ({mode: {times: 1}, mode: "alwaysOn"} became a rule that never stops).
     */
    private static BsonDocument readDocument(JsonReader reader, String path) {
        BsonDocument document = new BsonDocument();
        reader.readStartDocument();
        while (reader.readBsonType() != BsonType.END_OF_DOCUMENT) {
            String name = reader.readName();
            if (document.containsKey(name)) {
                throw new JsonParseException("'" + path + name + "' is given twice; give each field once");
            }
            document.put(name, readValue(reader, path + name));
        }
        reader.readEndDocument();
        return document;
    }

    private static BsonValue readValue(JsonReader reader, String path) {
        switch (reader.getCurrentBsonType()) {
            case DOCUMENT:
                return readDocument(reader, path + ".");
            case ARRAY:
                BsonArray array = new BsonArray();
                reader.readStartArray();
                while (reader.readBsonType() != BsonType.END_OF_DOCUMENT) {
                    array.add(readValue(reader, path + "." + array.size()));
                }
                reader.readEndArray();
                return array;
            default:
                return VALUES.decode(reader, DecoderContext.builder().build());
        }
    }

    private static String kind(BsonType type) {
        return switch (type) {
            case ARRAY -> "an array";
            case STRING -> "a string";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            case END_OF_DOCUMENT -> "nothing (the text is empty)"; // `fault add --json ''`: not "a end_of_document"
            case INT32, INT64, DOUBLE, DECIMAL128 -> "a number";
            default -> "a " + type.name().toLowerCase(Locale.ROOT);
        };
    }

    /** Counts the characters the JSON reader took: it reads one at a time and stops at the document's closing brace. */
    private static final class CountingReader extends StringReader {
        int read;

        CountingReader(String text) {
            super(text);
        }

        @Override
        public int read() throws IOException {
            int c = super.read();
            if (c >= 0) {
                read++;
            }
            return c;
        }

        @Override
        public int read(char[] buffer, int offset, int length) throws IOException {
            int n = super.read(buffer, offset, length);
            if (n > 0) {
                read += n;
            }
            return n;
        }
    }
}
