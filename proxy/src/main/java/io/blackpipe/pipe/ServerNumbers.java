package io.blackpipe.pipe;

import java.math.BigDecimal;
import java.math.RoundingMode;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/**
 * How mongod reads a command's number fields and names BSON types in its errors, for the commands
 * the proxy answers itself: a field of the server's IDL type safeInt64 takes an int, a long, a
 * double or a decimal, read as BSONElement::safeNumberLong reads them.
 */
final class ServerNumbers {
    /** The types of a safeInt64 field, as the server's TypeMismatch message lists them (its closing quote misplaced, as there). */
    static final String SAFE_INT64_TYPES = "[long, int, decimal, double']";

    private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);
    private static final BigDecimal LONG_MIN = BigDecimal.valueOf(Long.MIN_VALUE);

    private ServerNumbers() {
    }

    /** Whether the server's IDL takes {@code value} for a safeInt64 field. */
    static boolean isSafeInt64(BsonValue value) {
        return switch (value.getBsonType()) {
            case INT32, INT64, DOUBLE, DECIMAL128 -> true;
            default -> false;
        };
    }

    /**
     * {@code value} (one {@link #isSafeInt64} takes) as the server's safeNumberLong reads it: a double
     * truncated toward zero, a decimal rounded half to even, NaN as 0, anything beyond the 64-bit range
     * as its nearest end.
     */
    static long safeNumberLong(BsonValue value) {
        return switch (value.getBsonType()) {
            case INT32 -> value.asInt32().getValue();
            case INT64 -> value.asInt64().getValue();
            case DOUBLE -> (long) value.asDouble().getValue(); // Java's cast: NaN 0, clamped, toward zero, as the server's
            case DECIMAL128 -> decimalToLong(value.asDecimal128().getValue());
            default -> throw new IllegalArgumentException("not a number: " + value.getBsonType());
        };
    }

    private static long decimalToLong(Decimal128 decimal) {
        if (decimal.isNaN()) {
            return 0;
        }
        if (decimal.isInfinite()) {
            return decimal.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        BigDecimal exact;
        try {
            exact = decimal.bigDecimalValue();
        } catch (ArithmeticException negativeZero) { // the one finite decimal BigDecimal cannot hold
            return 0;
        }
        BigDecimal rounded = exact.setScale(0, RoundingMode.HALF_EVEN); // Decimal128::toLong's default rounding
        if (rounded.compareTo(LONG_MAX) > 0) {
            return Long.MAX_VALUE;
        }
        return rounded.compareTo(LONG_MIN) < 0 ? Long.MIN_VALUE : rounded.longValueExact();
    }

    /** The server's name of {@code value}'s type (its typeName()), as its errors quote it. */
    static String typeName(BsonValue value) {
        BsonType type = value.getBsonType();
        return switch (type) {
            case DOUBLE -> "double";
            case STRING -> "string";
            case DOCUMENT -> "object";
            case ARRAY -> "array";
            case BINARY -> "binData";
            case UNDEFINED -> "undefined";
            case OBJECT_ID -> "objectId";
            case BOOLEAN -> "bool";
            case DATE_TIME -> "date";
            case NULL -> "null";
            case REGULAR_EXPRESSION -> "regex";
            case DB_POINTER -> "dbPointer";
            case JAVASCRIPT -> "javascript";
            case SYMBOL -> "symbol";
            case JAVASCRIPT_WITH_SCOPE -> "javascriptWithScope";
            case INT32 -> "int";
            case TIMESTAMP -> "timestamp";
            case INT64 -> "long";
            case DECIMAL128 -> "decimal";
            case MIN_KEY -> "minKey";
            case MAX_KEY -> "maxKey";
            case END_OF_DOCUMENT -> "eoo";
        };
    }
}
