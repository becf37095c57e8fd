package io.blackpipe.testing;

import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonValue;

/**
 * The update operators a {@link ScriptedMongod} applies: $set, $unset, $inc, $addToSet and $pull
 * (of one value, by equality), on top-level fields. Anything else (a replacement, a pipeline, a
 * dotted path, $each, a $pull condition) is refused, never half applied.
 */
final class ScriptedMongodUpdates {
    private ScriptedMongodUpdates() {
    }

    /** Refuses what {@link #apply} would not implement, before any document is touched. */
    static void check(BsonValue update) {
        if (!update.isDocument() || update.asDocument().isEmpty()) {
            throw new IllegalArgumentException("ScriptedMongod implements update operator documents only, not " + update);
        }
        for (Map.Entry<String, BsonValue> op : update.asDocument().entrySet()) {
            if (!op.getKey().matches("\\$(set|unset|inc|addToSet|pull)") || !op.getValue().isDocument()) {
                throw new IllegalArgumentException("ScriptedMongod does not implement the update {" + op.getKey() + ": "
                        + op.getValue() + "}");
            }
            for (Map.Entry<String, BsonValue> field : op.getValue().asDocument().entrySet()) {
                BsonValue value = field.getValue();
                if (field.getKey().contains(".") || field.getKey().startsWith("$") || field.getKey().equals("_id")
                        || (op.getKey().equals("$inc") && !value.isNumber())
                        || (value.isDocument() && !value.asDocument().isEmpty() && value.asDocument().getFirstKey().startsWith("$"))) {
                    throw new IllegalArgumentException("ScriptedMongod does not implement " + op.getKey() + " {" + field.getKey()
                            + ": " + value + "}");
                }
            }
        }
    }

    /** Applies a {@link #check checked} update to {@code doc} in place; whether anything changed. */
    static boolean apply(BsonDocument doc, BsonDocument update) {
        boolean changed = false;
        for (Map.Entry<String, BsonValue> op : update.entrySet()) {
            for (Map.Entry<String, BsonValue> field : op.getValue().asDocument().entrySet()) {
                String name = field.getKey();
                BsonValue value = field.getValue();
                BsonValue have = doc.get(name);
                switch (op.getKey()) {
                    case "$set" -> {
                        changed |= have == null || !ScriptedMongodCommands.valuesEqual(have, value);
                        doc.put(name, copy(value));
                    }
                    case "$unset" -> changed |= doc.remove(name) != null;
                    case "$inc" -> {
                        doc.put(name, have == null ? copy(value) : sum(name, have, value));
                        changed |= have == null || value.asNumber().doubleValue() != 0;
                    }
                    case "$addToSet" -> {
                        BsonArray array = array(doc, name, have);
                        if (array.stream().noneMatch(v -> ScriptedMongodCommands.valuesEqual(v, value))) {
                            array.add(copy(value));
                            changed = true;
                        }
                    }
                    case "$pull" -> {
                        if (have != null) {
                            changed |= array(doc, name, have).removeIf(v -> ScriptedMongodCommands.valuesEqual(v, value));
                        }
                    }
                    default -> throw new IllegalStateException("unchecked update " + op.getKey());
                }
            }
        }
        return changed;
    }

    private static BsonValue copy(BsonValue value) {
        return value.isDocument() ? value.asDocument().clone() : value.isArray() ? value.asArray().clone() : value;
    }

    private static BsonArray array(BsonDocument doc, String name, BsonValue have) {
        if (have == null) {
            BsonArray array = new BsonArray();
            doc.put(name, array);
            return array;
        }
        if (!have.isArray()) {
            throw new IllegalArgumentException("Cannot apply $addToSet/$pull to non-array field '" + name + "'");
        }
        return have.asArray();
    }

    /** $inc's result type, as the server's: int32 while both are int32 and it fits, else int64, double if either is. */
    private static BsonValue sum(String name, BsonValue have, BsonValue by) {
        if (!have.isNumber()) {
            throw new IllegalArgumentException("Cannot apply $inc to a value of non-numeric type: field '" + name + "'");
        }
        if (have.isDouble() || by.isDouble()) {
            return new BsonDouble(have.asNumber().doubleValue() + by.asNumber().doubleValue());
        }
        long total = have.asNumber().longValue() + by.asNumber().longValue();
        return have.isInt32() && by.isInt32() && total == (int) total ? new BsonInt32((int) total) : new BsonInt64(total);
    }
}
