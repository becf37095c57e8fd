package io.blackpipe.fault;

import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The fields of one scenario file as {@link ScenarioLoader} reads them: their types, durations and refusals, each
 * refusal a {@link ScenarioException} at the line of the field it names.
 */
abstract class ScenarioFields {
    final String source;
    final YamlTree tree;

    ScenarioFields(String source, YamlTree tree) {
        this.source = source;
        this.tree = tree;
    }

    final void onlyFields(BsonDocument document, String field, List<String> known) {
        for (String key : document.keySet()) {
            if (!known.contains(key)) {
                throw error(field + "." + key, "unknown field (expected " + String.join(", ", known) + ")");
            }
        }
    }

    /** A step that takes no argument is written "clear: true": false (or anything else) would still run it. */
    final void requireTrue(BsonValue argument, String field) {
        if (!argument.isBoolean() || !argument.asBoolean().getValue()) {
            throw error(field, "must be true (to skip the step, leave it out)");
        }
    }

    final long duration(BsonValue value, String field, boolean required) {
        if (value == null) {
            if (required) {
                throw error(field, "required (e.g. 5s)");
            }
            return 0;
        }
        // a double as written (at: 0.4 is under 1ms, not 0)
        Object raw = value.isString() ? value.asString().getValue() : value.isDouble() ? (Object) value.asDouble().getValue()
                : value.isNumber() ? (Object) value.asNumber().longValue() : null;
        try {
            return Durations.millis(raw);
        } catch (IllegalArgumentException e) {
            throw error(field, e.getMessage());
        }
    }

    /** The optional {@code name} of {@code spec} (then, direction): {@code parse} of its string, else an error naming the {@code words} it takes. */
    final <T> T word(BsonDocument spec, String name, String field, T absent, Function<String, T> parse, String words) {
        BsonValue value = spec.get(name);
        if (value == null) {
            return absent;
        }
        try {
            return parse.apply(value.isString() ? value.asString().getValue() : null);
        } catch (IllegalArgumentException e) {
            throw error(field + "." + name, "must be " + words);
        }
    }

    final BsonArray array(BsonDocument document, String key) {
        BsonValue value = document.get(key);
        if (value == null) {
            return new BsonArray();
        }
        if (!value.isArray()) {
            throw error(key, "must be a list");
        }
        return value.asArray();
    }

    final String requiredString(BsonDocument document, String key, String field) {
        BsonValue value = document.get(key);
        if (value == null || !value.isString() || value.asString().getValue().isBlank()) {
            throw error(field, "required, a string");
        }
        return value.asString().getValue();
    }

    /** What {@code read} reads, or null with its error added to {@code errors}: a file's errors are reported together. */
    static <T> T checked(List<ScenarioException> errors, Supplier<T> read) {
        try {
            return read.get();
        } catch (ScenarioException e) {
            errors.add(e);
            return null;
        }
    }

    final ScenarioException error(String field, String message) {
        return new ScenarioException(source, tree.line(field), field, message);
    }
}
