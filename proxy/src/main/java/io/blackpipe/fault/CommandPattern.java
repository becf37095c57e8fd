package io.blackpipe.fault;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A rule's {@code commandMatches}: fields the command must hold, by dotted path into the command as
 * the server reads it (an insert's {@code documents}, an update's {@code updates} included), each
 * read as a MongoDB query reads a field's condition ({@link FieldCondition}): a value compared as a
 * query's equality compares (numbers by value whatever their type, a value matches an array holding
 * it, null matches a missing field), a regular expression, or field operators ($gt, $in, $exists,
 * ...). A path through an array looks into each element (or the one a numeric part names). Every
 * field must hold. Top-level operators ($or, $and) are refused; a command's own $-fields ($db,
 * $readPreference) are fields.
 */
public final class CommandPattern {
    private record Field(String[] parts, FieldCondition condition) {
    }

    /** A query's top-level operators; other $-names are a command's own fields ($db, $readPreference). */
    private static final Set<String> QUERY_OPERATORS = Set.of("$and", "$or", "$nor", "$not", "$expr", "$where", "$text",
            "$comment", "$jsonSchema", "$alwaysTrue", "$alwaysFalse", "$sampleRate");

    private final List<Field> fields;
    private final BsonDocument source;

    private CommandPattern(List<Field> fields, BsonDocument source) {
        this.fields = fields;
        this.source = source;
    }

    /** @throws RuleException naming {@code name} (and the path) when the document is no pattern */
    static CommandPattern parse(String name, BsonValue value) {
        if (value == null || !value.isDocument() || value.asDocument().isEmpty()) {
            throw new RuleException(name, "must be a non-empty document of dotted paths and the values the command must hold"
                    + " there, e.g. {\"documents.sku\": \"A1\"}");
        }
        List<Field> fields = new ArrayList<>();
        for (Map.Entry<String, BsonValue> field : value.asDocument().entrySet()) {
            String path = field.getKey();
            if (path.isEmpty() || path.startsWith(".") || path.endsWith(".") || path.contains("..")) {
                throw new RuleException(name, "'" + path + "' is not a dotted path (no empty parts)");
            }
            if (QUERY_OPERATORS.contains(path)) {
                throw new RuleException(name, "'" + path + "': top-level operators are not supported; give dotted paths and"
                        + " what must hold at each (a value, or field operators such as {\"$in\": [...]})");
            }
            fields.add(new Field(path.split("\\."), FieldCondition.parse(name + "." + path, field.getValue())));
        }
        return new CommandPattern(List.copyOf(fields), value.asDocument().clone());
    }

    public boolean matches(BsonDocument command) {
        for (Field field : fields) {
            if (!field.condition().holds(command, field.parts())) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return source.toJson();
    }
}
