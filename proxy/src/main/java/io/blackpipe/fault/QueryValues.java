package io.blackpipe.fault;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Values compared as a MongoDB query compares them: equality ({@code {field: value}}, $eq, $in) and
 * order ($gt, $lt and their kin), numbers by value whatever their type, and order only between values
 * of one kind (a number is neither above nor below a string), as the server's type bracketing has it.
 */
final class QueryValues {
    private static final BigDecimal LONG_MIN = BigDecimal.valueOf(Long.MIN_VALUE);
    private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);
    private QueryValues() {
    }

    /** BSON equality as MongoDB compares values: numbers by value, documents field by field in order. */
    static boolean equal(BsonValue a, BsonValue b) {
        if (isNumber(a) && isNumber(b)) {
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

    /** Whether {@code bound} is a value $gt and its kin can order against: a number, a string, an ObjectId, a boolean, a date or a timestamp. */
    static boolean orderable(BsonValue bound) {
        return kind(bound) != Kind.NONE;
    }

    /**
     * The order of {@code value} against {@code bound} (negative: below), or null when they cannot be
     * ordered: different kinds, or NaN against anything but NaN (a query's $lt: 5 does not match NaN;
     * $gte: NaN matches NaN alone).
     */
    static Integer compare(BsonValue value, BsonValue bound) {
        Kind kind = kind(value);
        if (kind == Kind.NONE || kind != kind(bound)) {
            return null;
        }
        return switch (kind) {
            case NUMBER -> compareNumbers(value, bound);
            case STRING -> compareCodePoints(text(value), text(bound));
            case OBJECT_ID -> value.asObjectId().getValue().compareTo(bound.asObjectId().getValue());
            case BOOLEAN -> Boolean.compare(value.asBoolean().getValue(), bound.asBoolean().getValue());
            case DATE -> Long.compare(value.asDateTime().getValue(), bound.asDateTime().getValue());
            case TIMESTAMP -> value.asTimestamp().compareTo(bound.asTimestamp()); // unsigned, seconds then increment
            case NONE -> null;
        };
    }

    private enum Kind { NUMBER, STRING, OBJECT_ID, BOOLEAN, DATE, TIMESTAMP, NONE }

    private static Kind kind(BsonValue value) {
        if (isNumber(value)) {
            return Kind.NUMBER;
        }
        return switch (value.getBsonType()) {
            case STRING, SYMBOL -> Kind.STRING;
            case OBJECT_ID -> Kind.OBJECT_ID;
            case BOOLEAN -> Kind.BOOLEAN;
            case DATE_TIME -> Kind.DATE;
            case TIMESTAMP -> Kind.TIMESTAMP;
            default -> Kind.NONE;
        };
    }

    /** A string's or a symbol's text: the server orders the two alike. */
    static String text(BsonValue value) {
        return value.isSymbol() ? value.asSymbol().getSymbol() : value.asString().getValue();
    }

    /** By code point, which is the server's byte order of UTF-8 (a String's own compareTo puts U+FFFF above U+10000). */
    private static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i);
            int y = b.codePointAt(j);
            if (x != y) {
                return Integer.compare(x, y);
            }
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    }

    /** A number, neither NaN nor an infinity ($mod's operands and the values it tests). */
    static boolean isFiniteNumber(BsonValue value) {
        return isNumber(value) && finite(value);
    }

    /** A finite number truncated toward zero, held to a long's range, as $mod reads it. */
    static long truncated(BsonValue value) {
        BigDecimal whole = exactly(value).setScale(0, RoundingMode.DOWN);
        return whole.max(LONG_MIN).min(LONG_MAX).longValueExact();
    }

    private static boolean isNumber(BsonValue value) {
        return value.isNumber() || value.isDecimal128();
    }

    private static boolean numbersEqual(BsonValue a, BsonValue b) {
        if (!finite(a) || !finite(b)) { // NaN equals NaN, as in a query; infinities by sign; a finite number neither
            return !finite(a) && !finite(b) && Double.compare(approximately(a), approximately(b)) == 0;
        }
        return exactly(a).compareTo(exactly(b)) == 0;
    }

    private static Integer compareNumbers(BsonValue a, BsonValue b) {
        boolean nanA = Double.isNaN(approximately(a));
        boolean nanB = Double.isNaN(approximately(b));
        if (nanA || nanB) {
            return nanA && nanB ? Integer.valueOf(0) : null;
        }
        if (!finite(a) || !finite(b)) { // an infinity against a finite number (even a decimal beyond a double): its sign decides
            return Integer.signum(Double.compare(finite(a) ? 0 : approximately(a), finite(b) ? 0 : approximately(b)));
        }
        return exactly(a).compareTo(exactly(b));
    }

    private static boolean finite(BsonValue value) {
        return value.isDecimal128() ? value.asDecimal128().getValue().isFinite() : Double.isFinite(value.asNumber().doubleValue());
    }

    /** NaN and the infinities, the only values compared as doubles. */
    private static double approximately(BsonValue value) {
        return value.isDecimal128() ? value.asDecimal128().getValue().doubleValue() : value.asNumber().doubleValue();
    }

    /** A finite number's exact value: a decimal beyond a double's range stays itself, and a double is its binary value. */
    static BigDecimal exactly(BsonValue value) {
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
}
