package io.blackpipe.fault;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A rule's {@code commandMatches}: fields the command must hold, by dotted path into the command as
 * the server reads it (an insert's {@code documents}, an update's {@code updates} included), each
 * compared as a MongoDB query's equality compares: numbers by value whatever their type, a path
 * through an array looks into each element (or the one a numeric part names), a value matches an
 * array holding it, and null matches a missing field. Every field must match. Operators ({$gt: ...})
 * are refused rather than read as a document to equal.
 */
public final class CommandPattern {
    private record Field(String path, String[] parts, BsonValue expected) {
    }

    private final List<Field> fields;

    private CommandPattern(List<Field> fields) {
        this.fields = fields;
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
            if (path.startsWith("$")) {
                throw new RuleException(name, "'" + path + "': operators are not supported; give fields and the values they must equal");
            }
            if (field.getValue().isRegularExpression()) {
                throw new RuleException(name + "." + path, "a regular expression is a query's pattern, not a value;"
                        + " commandMatches compares values for equality only (give the value itself)");
            }
            String operator = operatorIn(field.getValue());
            if (operator != null) {
                throw new RuleException(name + "." + path, operator + " is a query operator; commandMatches compares values"
                        + " for equality only (give the value itself)");
            }
            fields.add(new Field(path, path.split("\\."), field.getValue()));
        }
        return new CommandPattern(List.copyOf(fields));
    }

    /** The first $-name among a document value's top-level fields: written as a query operator would be. */
    private static String operatorIn(BsonValue value) {
        if (value.isDocument()) {
            for (String key : value.asDocument().keySet()) {
                if (key.startsWith("$")) {
                    return key;
                }
            }
        }
        return null;
    }

    public boolean matches(BsonDocument command) {
        for (Field field : fields) {
            if (!matches(command, field.parts(), 0, field.expected())) {
                return false;
            }
        }
        return true;
    }

    private static boolean matches(BsonValue value, String[] parts, int at, BsonValue expected) {
        if (at == parts.length) {
            return equal(value, expected) || value.isArray() && value.asArray().stream().anyMatch(e -> equal(e, expected));
        }
        if (value.isDocument()) {
            BsonValue next = value.asDocument().get(parts[at]);
            if (next == null) {
                return expected.isNull(); // as {field: null} matches a missing field
            }
            return matches(next, parts, at + 1, expected);
        }
        if (value.isArray()) {
            BsonArray array = value.asArray();
            int index = index(parts[at]);
            if (index >= 0 && index < array.size() && matches(array.get(index), parts, at + 1, expected)) {
                return true;
            }
            for (BsonValue element : array) {
                if (element.isDocument() && matches(element, parts, at, expected)) {
                    return true;
                }
            }
            return false;
        }
        return expected.isNull(); // a path through a scalar (or null) names a missing field, which null matches
    }

    private static int index(String part) {
        if (part.isEmpty() || part.length() > 9 || !part.chars().allMatch(Character::isDigit)) {
            return -1;
        }
        return Integer.parseInt(part);
    }

    /** BSON equality as MongoDB compares values: numbers by value, documents field by field in order. */
    static boolean equal(BsonValue a, BsonValue b) {
        if ((a.isNumber() || a.isDecimal128()) && (b.isNumber() || b.isDecimal128())) {
            return numbersEqual(a, b);
        }
        if (a.isDocument() && b.isDocument()) {
            BsonDocument x = a.asDocument();
            BsonDocument y = b.asDocument();
            if (x.size() != y.size()) {
                return false;
            }
            var xs = x.entrySet().iterator();
            var ys = y.entrySet().iterator();
            while (xs.hasNext()) {
                Map.Entry<String, BsonValue> p = xs.next();
                Map.Entry<String, BsonValue> q = ys.next();
                if (!p.getKey().equals(q.getKey()) || !equal(p.getValue(), q.getValue())) {
                    return false;
                }
            }
            return true;
        }
        if (a.isArray() && b.isArray()) {
            BsonArray x = a.asArray();
            BsonArray y = b.asArray();
            if (x.size() != y.size()) {
                return false;
            }
            for (int i = 0; i < x.size(); i++) {
                if (!equal(x.get(i), y.get(i))) {
                    return false;
                }
            }
            return true;
        }
        return a.equals(b);
    }

    private static boolean numbersEqual(BsonValue a, BsonValue b) {
        if (!finite(a) || !finite(b)) { // NaN equals NaN, as in a query; infinities by sign; a finite number neither
            return !finite(a) && !finite(b) && Double.compare(approximately(a), approximately(b)) == 0;
        }
        return exactly(a).compareTo(exactly(b)) == 0;
    }

    private static boolean finite(BsonValue value) {
        return value.isDecimal128() ? value.asDecimal128().getValue().isFinite() : Double.isFinite(value.asNumber().doubleValue());
    }

    /** NaN and the infinities, the only values compared as doubles. */
    private static double approximately(BsonValue value) {
        return value.isDecimal128() ? value.asDecimal128().getValue().doubleValue() : value.asNumber().doubleValue();
    }

    /** A finite number's exact value: a decimal beyond a double's range stays itself, and a double is its binary value. */
    private static BigDecimal exactly(BsonValue value) {
        if (value.isDecimal128()) {
            try {
                return value.asDecimal128().getValue().bigDecimalValue();
            } catch (ArithmeticException negativeZero) { // the one finite decimal without a BigDecimal
                return BigDecimal.ZERO;
            }
        }
        if (value.isDouble()) {
            return new BigDecimal(value.asDouble().getValue()); // 0.1 is not the decimal 0.1, as on mongod
        }
        return BigDecimal.valueOf(value.asNumber().longValue());
    }

    @Override
    public String toString() {
        BsonDocument pattern = new BsonDocument();
        fields.forEach(f -> pattern.append(f.path(), f.expected()));
        return pattern.toJson();
    }
}
