package io.blackpipe.fault;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.LongStream;
import org.bson.BsonValue;

/**
 * $bitsAllSet, $bitsAllClear, $bitsAnySet and $bitsAnyClear on one value, as mongod's matcher reads
 * them: the operand is a bitmask (a whole number from 0), an array of bit positions, or BinData
 * (bit 0 is the first byte's lowest); the value a whole number of 64 bits, sign-extended (so a
 * position past 63 reads the sign bit), or BinData, zero-extended. Any other value matches nothing,
 * a fractional double and NaN included.
 */
final class BitTest implements Predicate<BsonValue> {
    private static final BigDecimal LONG_MIN = BigDecimal.valueOf(Long.MIN_VALUE);
    private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);

    private final boolean all;
    private final boolean set;
    /** Positions from 63 up fold onto bit 63: a number's bits above it are copies of its sign. */
    private final long mask;
    private final long[] positions;

    private BitTest(String operator, long[] positions) {
        this.all = operator.startsWith("$bitsAll");
        this.set = operator.endsWith("Set");
        this.positions = positions;
        long folded = 0;
        for (long position : positions) {
            folded |= 1L << Math.min(position, 63);
        }
        this.mask = folded;
    }

    /** @throws RuleException naming {@code at} when {@code operand} is no bitmask, array of positions or BinData */
    static BitTest parse(String at, String operator, BsonValue operand) {
        if (operand.isNumber() || operand.isDecimal128()) {
            return new BitTest(operator, positionsOf(bitmask(at, operand)));
        }
        if (operand.isBinary()) {
            return new BitTest(operator, positionsOf(operand.asBinary().getData()));
        }
        if (operand.isArray()) {
            List<BsonValue> listed = operand.asArray().getValues();
            long[] positions = new long[listed.size()];
            for (int i = 0; i < positions.length; i++) {
                positions[i] = position(at, i, listed.get(i));
            }
            return new BitTest(operator, positions);
        }
        throw new RuleException(at, "takes a bitmask (a whole number from 0), an array of bit positions or BinData, not "
                + FieldCondition.shown(operand));
    }

    @Override
    public boolean test(BsonValue value) {
        if (value.isBinary()) {
            return testBytes(value.asBinary().getData());
        }
        Long whole = wholeNumber(value);
        if (whole == null) {
            return false;
        }
        long bits = set ? whole : ~whole;
        return all ? (bits & mask) == mask : (bits & mask) != 0;
    }

    private boolean testBytes(byte[] data) {
        for (long position : positions) {
            if (isSet(data, position) != set) {
                if (all) {
                    return false;
                }
            } else if (!all) {
                return true;
            }
        }
        return all; // every position passed (vacuously, for none), or none did
    }

    /** A number the matcher tests: an integral double within 64 bits, a decimal rounded half to even; else null. */
    private static Long wholeNumber(BsonValue value) {
        if (value.isInt32() || value.isInt64()) {
            return value.asNumber().longValue();
        }
        if (!QueryValues.isFiniteNumber(value)) {
            return null; // NaN, an infinity, or no number
        }
        BigDecimal exact = QueryValues.exactly(value);
        if (value.isDouble() && exact.stripTrailingZeros().scale() > 0) {
            return null; // as mongod: a fractional double has no bits to test
        }
        return withinLong(exact.setScale(0, RoundingMode.HALF_EVEN));
    }

    private static Long withinLong(BigDecimal whole) {
        return whole.compareTo(LONG_MIN) >= 0 && whole.compareTo(LONG_MAX) <= 0 ? whole.longValueExact() : null;
    }

    private static long bitmask(String at, BsonValue operand) {
        Long whole = exactlyWhole(operand);
        if (whole == null || whole < 0) {
            throw new RuleException(at, "a bitmask must be a whole number from 0 to 2^63-1, not " + FieldCondition.shown(operand));
        }
        return whole;
    }

    private static long position(String at, int index, BsonValue listed) {
        Long whole = exactlyWhole(listed);
        if (whole == null || whole < 0 || whole > Integer.MAX_VALUE) {
            throw new RuleException(at + "." + index, "a bit position must be a whole number from 0 to 2147483647, not "
                    + FieldCondition.shown(listed));
        }
        return whole;
    }

    /** An operand's number when it is whole and within 64 bits (1.5 is neither a bitmask nor a position); else null. */
    private static Long exactlyWhole(BsonValue operand) {
        if (!QueryValues.isFiniteNumber(operand)) {
            return null;
        }
        BigDecimal exact = QueryValues.exactly(operand);
        return exact.stripTrailingZeros().scale() > 0 ? null : withinLong(exact.setScale(0, RoundingMode.UNNECESSARY));
    }

    private static long[] positionsOf(long bitmask) {
        return LongStream.range(0, 64).filter(bit -> (bitmask & (1L << bit)) != 0).toArray();
    }

    private static long[] positionsOf(byte[] bytes) {
        return LongStream.range(0, bytes.length * 8L).filter(bit -> isSet(bytes, bit)).toArray();
    }

    /** Bit 0 is the first byte's lowest; past the data's end every bit is clear. */
    private static boolean isSet(byte[] bytes, long bit) {
        return bit < bytes.length * 8L && (bytes[(int) (bit / 8)] & (1 << (bit % 8))) != 0;
    }
}
