package io.blackpipe.pipe;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * The index a one-document insert met a duplicate key of, as mongod names it in the write error: its key pattern
 * ({@code {email: 1}}) and the inserted document's values under it ({@code {email: "a@x"}}). Read from jongodb's
 * message ("E11000 duplicate key error index: email_1 dup key: { email: a@x }"), which gives the values as text only,
 * so only where nothing is guessed: the index {@code _id_}, or an index whose name is the one mongod gives by default
 * (each field and its direction, 1 or -1, joined by "_") and whose fields the message's key names in that order. A
 * field under an array (a multikey index: which element met the duplicate is not said) tells nothing.
 */
record DuplicateKeyIndex(BsonDocument pattern, BsonDocument value) {
    private static final Pattern MESSAGE = Pattern.compile("index: (\\S+) dup key: \\{ (.*) \\}$");
    private static final BsonInt32 ASCENDING = new BsonInt32(1);
    private static final BsonInt32 DESCENDING = new BsonInt32(-1);

    /** The index of {@code errmsg} with {@code inserted}'s values, or null when it cannot be told for sure. */
    static DuplicateKeyIndex of(String errmsg, BsonDocument inserted) {
        Matcher message = MESSAGE.matcher(errmsg);
        if (!message.find()) {
            return null;
        }
        String name = message.group(1);
        List<String> tokens = name.equals("_id_") ? List.of("_id", "1") : List.of(name.split("_", -1));
        BsonDocument pattern = patternNamed(tokens, 0, message.group(2), new BsonDocument());
        if (pattern == null) {
            return null;
        }
        BsonDocument value = new BsonDocument();
        for (String field : pattern.keySet()) {
            BsonValue found = valueAt(inserted, field);
            if (found == null) {
                return null;
            }
            value.append(field, found);
        }
        return new DuplicateKeyIndex(pattern, value);
    }

    /**
     * The key pattern whose default name is {@code tokens} from {@code from} on, after the fields of {@code soFar}, and
     * whose fields the message's {@code key} ("a.b: x, n_x: 5") names in order; null when there is none. A field name may
     * hold "_" itself, so each way of cutting the name at a direction is tried.
     */
    private static BsonDocument patternNamed(List<String> tokens, int from, String key, BsonDocument soFar) {
        if (from == tokens.size()) {
            return namesInOrder(key, new ArrayList<>(soFar.keySet())) ? soFar : null;
        }
        for (int direction = from + 1; direction < tokens.size(); direction++) {
            BsonInt32 sense = tokens.get(direction).equals("1") ? ASCENDING : tokens.get(direction).equals("-1") ? DESCENDING : null;
            String field = String.join("_", tokens.subList(from, direction));
            if (sense == null || field.isEmpty() || soFar.containsKey(field)) {
                continue;
            }
            BsonDocument pattern = patternNamed(tokens, direction + 1, key, soFar.clone().append(field, sense));
            if (pattern != null) {
                return pattern;
            }
        }
        return null;
    }

    /** Whether the message's key text names {@code fields}, in order: "f1: …, f2: …". */
    private static boolean namesInOrder(String key, List<String> fields) {
        if (fields.isEmpty() || !key.startsWith(fields.get(0) + ": ")) {
            return false;
        }
        int at = fields.get(0).length() + 2;
        for (String field : fields.subList(1, fields.size())) {
            at = key.indexOf(", " + field + ": ", at);
            if (at < 0) {
                return false;
            }
            at += field.length() + 4;
        }
        return true;
    }

    /** The value at a dotted path, BsonNull where it is missing (as an index keys it); null under an array. */
    private static BsonValue valueAt(BsonDocument document, String path) {
        BsonValue at = document;
        for (String step : path.split("\\.", -1)) {
            if (at.isArray()) {
                return null;
            }
            if (!at.isDocument() || !at.asDocument().containsKey(step)) {
                return BsonNull.VALUE;
            }
            at = at.asDocument().get(step);
        }
        return at.isArray() ? null : at;
    }
}
