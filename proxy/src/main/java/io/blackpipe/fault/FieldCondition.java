package io.blackpipe.fault;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonRegularExpression;
import org.bson.BsonType;
import org.bson.BsonValue;

/**
 * What one commandMatches path must hold, as a MongoDB query's condition on one field reads: a value
 * to equal, a regular expression, or a document of field operators, every one of which must hold
 * ($eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $all, $exists, $type, $size, $mod, $regex with $options,
 * $elemMatch, $not, and the four bit tests of {@link BitTest}). As in a query, a condition holds when
 * any value the path reaches satisfies it (a path through an array reaches every element), $ne, $nin
 * and {$exists: false} hold when none does, and $not when its operators do not hold.
 */
final class FieldCondition {
    static final List<String> OPERATORS = List.of("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$all",
            "$exists", "$type", "$size", "$mod", "$regex", "$options", "$elemMatch", "$not", "$bitsAllSet", "$bitsAllClear",
            "$bitsAnySet", "$bitsAnyClear");
    private static final String[] HERE = new String[0];

    /** A test of one value the path reaches; null when the path reaches a missing field. */
    private interface ValueTest extends Predicate<BsonValue> {
    }

    /** One operator's condition on the values {@code path} reaches from {@code root}. */
    private interface Clause {
        boolean holds(BsonValue root, String[] path);
    }

    private final List<Clause> clauses;

    private FieldCondition(List<Clause> clauses) {
        this.clauses = clauses;
    }

    /** Whether every operator holds for what {@code path} reaches in {@code root} (a command, or an array's element). */
    boolean holds(BsonValue root, String[] path) {
        for (Clause clause : clauses) {
            if (!clause.holds(root, path)) {
                return false;
            }
        }
        return true;
    }

    /** Holds when any value reached passes {@code test}. */
    private static Clause any(ValueTest test) {
        return (root, path) -> anyReached(root, path, 0, test);
    }

    /** Holds when no value reached passes {@code test} ($ne, $nin, {$exists: false}). */
    private static Clause none(ValueTest test) {
        return (root, path) -> !anyReached(root, path, 0, test);
    }

    /** @throws RuleException naming {@code field} and the operator when {@code value} is no condition a query would take */
    static FieldCondition parse(String field, BsonValue value) {
        if (value.isRegularExpression()) {
            return new FieldCondition(List.of(any(matching(field, value.asRegularExpression()))));
        }
        if (!isOperatorDocument(value)) {
            return new FieldCondition(List.of(any(equalTo(value))));
        }
        BsonDocument operators = value.asDocument();
        List<Clause> clauses = new ArrayList<>();
        for (Map.Entry<String, BsonValue> entry : operators.entrySet()) {
            String operator = entry.getKey();
            BsonValue operand = entry.getValue();
            String at = field + "." + operator;
            switch (operator) {
                case "$eq" -> clauses.add(any(equalTo(operand)));
                case "$ne" -> clauses.add(none(equalTo(notARegex(at, operand, "$ne"))));
                case "$gt", "$gte", "$lt", "$lte" -> clauses.add(any(ordered(at, operator, operand)));
                case "$in" -> clauses.add(any(oneOf(at, operand)));
                case "$nin" -> clauses.add(none(oneOf(at, operand)));
                case "$all" -> clauses.addAll(everyOf(at, operand));
                case "$exists" -> clauses.add(truth(at, operand) ? any(v -> v != null) : none(v -> v != null));
                case "$type" -> clauses.add(any(typed(at, operand)));
                case "$size" -> clauses.add(any(sized(at, operand)));
                case "$mod" -> clauses.add(any(remainder(at, operand)));
                case "$regex" -> clauses.add(any(matching(at, regex(at, operand, operators.get("$options")))));
                case "$elemMatch" -> clauses.add(any(elementMatching(at, operand)));
                case "$not" -> clauses.add(negation(at, operand));
                case "$bitsAllSet", "$bitsAllClear", "$bitsAnySet", "$bitsAnyClear" -> clauses.add(any(bits(at, operator, operand)));
                case "$options" -> {
                    if (!operators.containsKey("$regex")) {
                        throw new RuleException(at, "$options without $regex: give the pattern too");
                    }
                }
                default -> throw new RuleException(at, operator.startsWith("$")
                        ? "not an operator commandMatches takes (it takes " + String.join(", ", OPERATORS) + ")"
                        : "a field among operators: give either a value to equal or operators, as in a query");
            }
        }
        return new FieldCondition(List.copyOf(clauses));
    }

    /** Read as operators when any of its top-level names starts with $ (mixed with fields, it is refused). */
    private static boolean isOperatorDocument(BsonValue value) {
        return value.isDocument() && value.asDocument().keySet().stream().anyMatch(k -> k.startsWith("$"));
    }

    /** Whether any value the path reaches (or, where it reaches none, the missing field) passes {@code test}. */
    private static boolean anyReached(BsonValue value, String[] parts, int at, ValueTest test) {
        if (at == parts.length) {
            return test.test(value);
        }
        if (value.isDocument()) {
            BsonValue next = value.asDocument().get(parts[at]);
            return next == null ? test.test(null) : anyReached(next, parts, at + 1, test);
        }
        if (value.isArray()) {
            BsonArray array = value.asArray();
            int index = index(parts[at]);
            if (index >= 0 && index < array.size() && anyReached(array.get(index), parts, at + 1, test)) {
                return true;
            }
            for (BsonValue element : array) {
                if (element.isDocument() && anyReached(element, parts, at, test)) {
                    return true;
                }
            }
            return false;
        }
        return test.test(null); // a path through a scalar (or null) names a missing field
    }

    private static int index(String part) {
        if (part.isEmpty() || part.length() > 9 || !part.chars().allMatch(Character::isDigit)) {
            return -1;
        }
        return Integer.parseInt(part);
    }

    /** A value equal to {@code expected}, or an array holding one; null matches a missing field too. */
    private static ValueTest equalTo(BsonValue expected) {
        return v -> v == null ? expected.isNull() : QueryValues.equal(v, expected) || elementPasses(v, e -> QueryValues.equal(e, expected));
    }

    private static boolean elementPasses(BsonValue value, Predicate<BsonValue> test) {
        return value.isArray() && value.asArray().stream().anyMatch(test);
    }

    private static ValueTest ordered(String at, String operator, BsonValue bound) {
        if (!QueryValues.orderable(bound)) {
            throw new RuleException(at, operator + " orders numbers, strings, ObjectIds, booleans, dates and timestamps; not "
                    + kind(bound));
        }
        Predicate<Integer> wanted = switch (operator) {
            case "$gt" -> order -> order > 0;
            case "$gte" -> order -> order >= 0;
            case "$lt" -> order -> order < 0;
            default -> order -> order <= 0;
        };
        Predicate<BsonValue> passes = v -> {
            Integer order = QueryValues.compare(v, bound);
            return order != null && wanted.test(order);
        };
        return v -> v != null && (passes.test(v) || elementPasses(v, passes));
    }

    private static ValueTest oneOf(String at, BsonValue operand) {
        if (!operand.isArray()) {
            throw new RuleException(at, "must be an array of the values to match, not " + kind(operand));
        }
        List<ValueTest> tests = new ArrayList<>();
        for (BsonValue candidate : operand.asArray()) {
            tests.add(valueOrRegex(at, candidate));
        }
        return v -> tests.stream().anyMatch(t -> t.test(v));
    }

    /** One of $in's, $nin's or $all's values: equal to it, or found by it when it is a regular expression. */
    private static ValueTest valueOrRegex(String at, BsonValue candidate) {
        if (isOperatorDocument(candidate)) {
            throw new RuleException(at, "holds an operator (" + candidate.asDocument().getFirstKey()
                    + "); give values or regular expressions");
        }
        return candidate.isRegularExpression() ? matching(at, candidate.asRegularExpression()) : equalTo(candidate);
    }

    /** $all: each value (or regex) held, as that many equalities on the path would be. */
    private static List<Clause> everyOf(String at, BsonValue operand) {
        if (!operand.isArray()) {
            throw new RuleException(at, "must be an array of the values the field must all hold, not " + kind(operand));
        }
        if (operand.asArray().isEmpty()) {
            return List.of((root, path) -> false); // as in a query: $all of nothing matches nothing
        }
        List<Clause> each = new ArrayList<>();
        for (BsonValue candidate : operand.asArray()) {
            each.add(any(valueOrRegex(at, candidate)));
        }
        return each;
    }

    private static ValueTest typed(String at, BsonValue operand) {
        Set<BsonType> types = QueryTypes.named(at, operand);
        return v -> v != null && (QueryTypes.isOneOf(v, types) || elementPasses(v, e -> QueryTypes.isOneOf(e, types)));
    }

    /** $mod: [divisor, remainder], both truncated to whole numbers, as the server does. */
    private static ValueTest remainder(String at, BsonValue operand) {
        if (!operand.isArray() || operand.asArray().size() != 2 || !operand.asArray().stream().allMatch(QueryValues::isFiniteNumber)) {
            throw new RuleException(at, "must be [divisor, remainder], two numbers, not " + shown(operand));
        }
        long divisor = QueryValues.truncated(operand.asArray().get(0));
        long wanted = QueryValues.truncated(operand.asArray().get(1));
        if (divisor == 0) {
            throw new RuleException(at, "the divisor must not be 0");
        }
        Predicate<BsonValue> passes = v -> QueryValues.isFiniteNumber(v) && QueryValues.truncated(v) % divisor == wanted;
        return v -> v != null && (passes.test(v) || elementPasses(v, passes));
    }

    private static ValueTest bits(String at, String operator, BsonValue operand) {
        BitTest test = BitTest.parse(at, operator, operand);
        return v -> v != null && (test.test(v) || elementPasses(v, test));
    }

    /**
     * $elemMatch: an array with one element that holds every condition. Field operators ({$gt: 5})
     * test the element itself; a pattern ({sku: 'A1', qty: {$gt: 5}}) tests an element document.
     */
    private static ValueTest elementMatching(String at, BsonValue operand) {
        if (!operand.isDocument() || operand.asDocument().isEmpty()) {
            throw new RuleException(at, "must be a non-empty document of the conditions one element must hold, not " + shown(operand));
        }
        Predicate<BsonValue> element;
        if (isOperatorDocument(operand) && operand.asDocument().keySet().stream().noneMatch(CommandPattern::isLogical)) {
            FieldCondition condition = parse(at, operand);
            element = e -> condition.holds(e, HERE);
        } else {
            CommandPattern pattern = CommandPattern.parse(at, operand);
            element = e -> e.isDocument() && pattern.matches(e.asDocument());
        }
        return v -> v != null && v.isArray() && v.asArray().stream().anyMatch(element);
    }

    /** $not: holds where its operators (or regular expression) do not; a missing field included, as in a query. */
    private static Clause negation(String at, BsonValue operand) {
        if (!operand.isRegularExpression() && !isOperatorDocument(operand)) {
            throw new RuleException(at, "takes field operators or a regular expression, as in a query, not " + shown(operand));
        }
        FieldCondition condition = parse(at, operand);
        return (root, path) -> !condition.holds(root, path);
    }

    private static ValueTest sized(String at, BsonValue operand) {
        boolean whole = operand.isInt32() || operand.isInt64() || operand.isDouble() && operand.asDouble().getValue() % 1 == 0;
        if (!whole || operand.asNumber().longValue() < 0) {
            throw new RuleException(at, "must be a whole number of elements, 0 or more, not " + shown(operand));
        }
        long size = operand.asNumber().longValue();
        return v -> v != null && v.isArray() && v.asArray().size() == size;
    }

    /** A string (or symbol) the expression finds, or an array holding one; or that same regular expression as a value. */
    private static ValueTest matching(String at, BsonRegularExpression regex) {
        Pattern pattern = compile(at, regex);
        Predicate<BsonValue> found = v -> (v.isString() || v.isSymbol()) && pattern.matcher(QueryValues.text(v)).find();
        return v -> v != null && (found.test(v) || v.equals(regex) || elementPasses(v, found));
    }

    private static BsonRegularExpression regex(String at, BsonValue pattern, BsonValue options) {
        if (options != null && !options.isString()) {
            throw new RuleException(at, "$options must be a string of flags (i, m, s, x, u), not " + kind(options));
        }
        String flags = options == null ? "" : options.asString().getValue();
        if (pattern.isRegularExpression()) {
            return new BsonRegularExpression(pattern.asRegularExpression().getPattern(), pattern.asRegularExpression().getOptions() + flags);
        }
        if (!pattern.isString()) {
            throw new RuleException(at, "must be a pattern string, not " + kind(pattern));
        }
        return new BsonRegularExpression(pattern.asString().getValue(), flags);
    }

    private static Pattern compile(String at, BsonRegularExpression regex) {
        int flags = 0;
        for (char option : regex.getOptions().toCharArray()) {
            flags |= switch (option) {
                case 'i' -> Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE;
                case 'm' -> Pattern.MULTILINE;
                case 's' -> Pattern.DOTALL;
                case 'x' -> Pattern.COMMENTS;
                case 'u' -> Pattern.UNICODE_CHARACTER_CLASS;
                default -> throw new RuleException(at, "'" + option + "' is not a regular expression option (i, m, s, x, u)");
            };
        }
        try {
            return Pattern.compile(regex.getPattern(), flags);
        } catch (PatternSyntaxException e) {
            throw new RuleException(at, "not a regular expression: " + e.getDescription() + " near index " + e.getIndex()
                    + " of '" + regex.getPattern() + "'");
        }
    }

    private static BsonValue notARegex(String at, BsonValue operand, String operator) {
        if (operand.isRegularExpression()) {
            throw new RuleException(at, operator + " takes a value, not a regular expression (as in a query)");
        }
        return operand;
    }

    private static boolean truth(String at, BsonValue operand) {
        if (operand.isBoolean()) {
            return operand.asBoolean().getValue();
        }
        if (operand.isNumber()) {
            return operand.asNumber().doubleValue() != 0;
        }
        throw new RuleException(at, "must be true or false, not " + kind(operand));
    }

    /** A value as JSON (a BsonValue's own toString names its class). */
    static String shown(BsonValue value) {
        String json = new BsonDocument("v", value).toJson();
        return json.substring("{\"v\": ".length(), json.length() - 1);
    }

    private static String kind(BsonValue value) {
        return switch (value.getBsonType()) {
            case NULL -> "null";
            case INT32, INT64, DOUBLE, DECIMAL128 -> "a number";
            case ARRAY -> "an array";
            case OBJECT_ID -> "an ObjectId";
            case DATE_TIME -> "a date";
            case REGULAR_EXPRESSION -> "a regular expression";
            default -> "a " + value.getBsonType().name().toLowerCase(Locale.ROOT).replace('_', ' ');
        };
    }
}
