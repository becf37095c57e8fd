package io.blackpipe.fault;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A rule's {@code commandMatches}: fields the command must hold, by dotted path into the command as
 * the server reads it (an insert's {@code documents}, an update's {@code updates} included), each
 * read as a MongoDB query reads a field's condition ({@link FieldCondition}): a value compared as a
 * query's equality compares (numbers by value whatever their type, a value matches an array holding
 * it, null matches a missing field), a regular expression, or field operators ($gt, $in, $exists,
 * $elemMatch, ...). A path through an array looks into each element (or the one a numeric part names).
 * Every field must hold; $and, $or and $nor join patterns as in a query. Other top-level operators
 * ($expr, $where) are refused; a command's own $-fields ($db, $readPreference) are fields.
 */
public final class CommandPattern {
    private static final Set<String> LOGICAL = Set.of("$and", "$or", "$nor");

    /** A query's other top-level operators; other $-names are a command's own fields ($db, $readPreference). */
    private static final Set<String> UNSUPPORTED = Set.of("$not", "$expr", "$where", "$text", "$comment", "$jsonSchema",
            "$alwaysTrue", "$alwaysFalse", "$sampleRate");

    private final List<Predicate<BsonDocument>> clauses;
    private final BsonDocument source;

    private CommandPattern(List<Predicate<BsonDocument>> clauses, BsonDocument source) {
        this.clauses = clauses;
        this.source = source;
    }

    /** @throws RuleException naming {@code name} (and the path) when the document is no pattern */
    static CommandPattern parse(String name, BsonValue value) {
        if (value == null || !value.isDocument() || value.asDocument().isEmpty()) {
            throw new RuleException(name, "must be a non-empty document of dotted paths and the values the command must hold"
                    + " there, e.g. {\"documents.sku\": \"A1\"}");
        }
        List<Predicate<BsonDocument>> clauses = new ArrayList<>();
        for (Map.Entry<String, BsonValue> field : value.asDocument().entrySet()) {
            String path = field.getKey();
            if (path.isEmpty() || path.startsWith(".") || path.endsWith(".") || path.contains("..")) {
                throw new RuleException(name, "'" + path + "' is not a dotted path (no empty parts)");
            }
            if (UNSUPPORTED.contains(path)) {
                throw new RuleException(name, "'" + path + "': of a query's top-level operators only $and, $or and $nor are"
                        + " supported; give dotted paths and what must hold at each (a value, or field operators such as"
                        + " {\"$in\": [...]})");
            }
            clauses.add(isLogical(path) ? logical(name + "." + path, path, field.getValue()) : condition(name, path, field.getValue()));
        }
        return new CommandPattern(List.copyOf(clauses), value.asDocument().clone());
    }

    static boolean isLogical(String name) {
        return LOGICAL.contains(name);
    }

    private static Predicate<BsonDocument> condition(String name, String path, BsonValue value) {
        String[] parts = path.split("\\.");
        FieldCondition condition = FieldCondition.parse(name + "." + path, value);
        return command -> condition.holds(command, parts);
    }

    /** $and: every pattern holds; $or: one does; $nor: none does. */
    private static Predicate<BsonDocument> logical(String at, String operator, BsonValue operand) {
        if (!operand.isArray() || operand.asArray().isEmpty()) {
            throw new RuleException(at, "must be a non-empty array of patterns, e.g. [{\"insert\": \"orders\"}, {\"update\": \"orders\"}]");
        }
        List<CommandPattern> patterns = new ArrayList<>();
        for (int i = 0; i < operand.asArray().size(); i++) {
            patterns.add(parse(at + "." + i, operand.asArray().get(i)));
        }
        return switch (operator) {
            case "$and" -> command -> patterns.stream().allMatch(p -> p.matches(command));
            case "$or" -> command -> patterns.stream().anyMatch(p -> p.matches(command));
            default -> command -> patterns.stream().noneMatch(p -> p.matches(command));
        };
    }

    public boolean matches(BsonDocument command) {
        for (Predicate<BsonDocument> clause : clauses) {
            if (!clause.test(command)) {
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
