package io.blackpipe.fault;

import java.io.IOException;
import java.io.StringReader;
import java.util.Locale;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
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
     * {@code document} as JSON that reads back as the same types. Relaxed JSON, what {@link BsonDocument#toJson()}
     * writes, gives an Int64 as a bare number, which reads back as an Int32: a canned reply's {n: NumberLong(3)},
     * sent on over the admin API or kept as JSON, came back an int, and the app's getLong("n") threw. So each Int64
     * is written {"$numberLong": "N"}; the other types read back as they were.
     */
    public static String typedJson(BsonDocument document) {
        return longsSpelledOut(document).toJson();
    }

    /**
     * {@code value} as a rule written by hand holds it: an Int32 where it fits, else an Int64. A rule the CLI or the
     * Java API builds then lists as the JSON one would type, not with {"$numberLong": "300"} for a block of 300 ms.
     */
    public static BsonValue integer(long value) {
        return value == (int) value ? new BsonInt32((int) value) : new BsonInt64(value);
    }

    /**
     * A copy of {@code document} to embed in an answer written as relaxed JSON (see {@link #typedJson}): each Int64
     * replaced by the document {"$numberLong": "N"}, which a JSON reader reads back as that Int64.
     */
    public static BsonDocument longsSpelledOut(BsonDocument document) {
        BsonDocument copy = new BsonDocument();
        document.forEach((name, value) -> copy.put(name, longSpelledOut(value)));
        return copy;
    }

    private static BsonValue longSpelledOut(BsonValue value) {
        if (value.isInt64()) {
            return new BsonDocument("$numberLong", new BsonString(Long.toString(value.asInt64().getValue())));
        }
        if (value.isDocument()) {
            return longsSpelledOut(value.asDocument());
        }
        if (value.isArray()) {
            BsonArray array = new BsonArray();
            value.asArray().forEach(element -> array.add(longSpelledOut(element)));
            return array;
        }
        return value;
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
