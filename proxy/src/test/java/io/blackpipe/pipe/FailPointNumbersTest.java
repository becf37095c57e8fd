package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bson.BsonBoolean;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.Test;

/**
 * The failpoint's numbers at their boundaries, as the server keeps them: a 64-bit count appended
 * as an int below 2^30 and a long from there, and waitForFailPoint's numbers read as its IDL's
 * safeInt64 reads them, whatever number type the client sent.
 */
class FailPointNumbersTest {

    @Test
    void theCountIsAnIntBelowTwoToTheThirtiethAndALongFromThereToTheTopOf64Bits() {
        assertEquals(new BsonInt32(0), FailPointCommand.countValue(0));
        assertEquals(new BsonInt32((1 << 30) - 1), FailPointCommand.countValue((1 << 30) - 1));
        assertEquals(new BsonInt64(1 << 30), FailPointCommand.countValue(1 << 30));
        assertEquals(new BsonInt64(Integer.MAX_VALUE + 1L), FailPointCommand.countValue(Integer.MAX_VALUE + 1L),
                "past the 32-bit range, not wrapped to a negative int");
        assertEquals(new BsonInt64(Long.MAX_VALUE), FailPointCommand.countValue(Long.MAX_VALUE));
    }

    @Test
    void intsLongsDoublesAndDecimalsAreNumbersTheServerTakesAndNothingElse() {
        assertTrue(ServerNumbers.isSafeInt64(new BsonInt32(1)));
        assertTrue(ServerNumbers.isSafeInt64(new BsonInt64(1)));
        assertTrue(ServerNumbers.isSafeInt64(new BsonDouble(1)));
        assertTrue(ServerNumbers.isSafeInt64(new BsonDecimal128(Decimal128.parse("1"))));
        assertFalse(ServerNumbers.isSafeInt64(new BsonString("1")));
        assertFalse(ServerNumbers.isSafeInt64(BsonBoolean.TRUE));
        assertFalse(ServerNumbers.isSafeInt64(BsonNull.VALUE));
    }

    @Test
    void numbersAreReadAsTheServersSafeNumberLongReadsThem() {
        assertEquals(Integer.MIN_VALUE, ServerNumbers.safeNumberLong(new BsonInt32(Integer.MIN_VALUE)));
        assertEquals(Long.MAX_VALUE, ServerNumbers.safeNumberLong(new BsonInt64(Long.MAX_VALUE)));
        assertEquals(4_294_967_297L, ServerNumbers.safeNumberLong(new BsonDouble(4_294_967_297.0)));
        // doubles: toward zero, NaN as 0, beyond the range its nearest end
        assertEquals(1, ServerNumbers.safeNumberLong(new BsonDouble(1.9)));
        assertEquals(-1, ServerNumbers.safeNumberLong(new BsonDouble(-1.9)));
        assertEquals(0, ServerNumbers.safeNumberLong(new BsonDouble(Double.NaN)));
        assertEquals(Long.MAX_VALUE, ServerNumbers.safeNumberLong(new BsonDouble(0x1p63)));
        assertEquals(Long.MIN_VALUE, ServerNumbers.safeNumberLong(new BsonDouble(Double.NEGATIVE_INFINITY)));
        // decimals: half to even, NaN and negative zero as 0, beyond the range its nearest end
        assertEquals(2, ServerNumbers.safeNumberLong(decimal("2.5")));
        assertEquals(4, ServerNumbers.safeNumberLong(decimal("3.5")));
        assertEquals(0, ServerNumbers.safeNumberLong(decimal("NaN")));
        assertEquals(0, ServerNumbers.safeNumberLong(decimal("-0")));
        assertEquals(Long.MAX_VALUE, ServerNumbers.safeNumberLong(decimal("9223372036854775808")));
        assertEquals(Long.MIN_VALUE, ServerNumbers.safeNumberLong(decimal("-1E+6000")));
        assertEquals(Long.MAX_VALUE, ServerNumbers.safeNumberLong(decimal("Infinity")));
    }

    @Test
    void typesAreNamedAsTheServerNamesThemInItsErrors() {
        assertEquals("string", ServerNumbers.typeName(new BsonString("x")));
        assertEquals("bool", ServerNumbers.typeName(BsonBoolean.FALSE));
        assertEquals("object", ServerNumbers.typeName(new BsonDocument()));
        assertEquals("null", ServerNumbers.typeName(BsonNull.VALUE));
        assertEquals("decimal", ServerNumbers.typeName(decimal("1")));
        assertEquals("long", ServerNumbers.typeName(new BsonInt64(1)));
    }

    private static BsonDecimal128 decimal(String value) {
        return new BsonDecimal128(Decimal128.parse(value));
    }
}
