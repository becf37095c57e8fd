package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bson.BsonDocument;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * commandMatches' bit tests, as mongod's matcher reads them (its bit_test jstests and
 * BitTestMatchExpression): a bitmask, bit positions or BinData against whole numbers (sign-extended)
 * and BinData (zero-extended).
 */
class BitTestTest {
    /** flags 54 is 0b110110; -2 is all ones but bit 0; the BinData's bytes are 0x01 0x80 (bits 0 and 15). */
    private static final BsonDocument COMMAND = BsonDocument.parse("{update: 'orders', flags: 54, negative: -2,"
            + " long: {$numberLong: '4294967296'}, whole: 6.0, fractional: 6.5, nan: NaN, huge: 1e30,"
            + " decimal: {$numberDecimal: '5.5'}, bytes: {$binary: {base64: 'AYA=', subType: '00'}}, text: '54',"
            + " batch: [1, 2, 'x']}");

    private static boolean holds(String json) {
        return CommandPattern.parse("data.commandMatches", BsonDocument.parse(json)).matches(COMMAND);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "{flags: {$bitsAllSet: 6}}                      | true",  // 0b110
            "{flags: {$bitsAllSet: 7}}                      | false", // bit 0 is clear
            "{flags: {$bitsAllSet: [1, 2, 4, 5]}}           | true",
            "{flags: {$bitsAllSet: [1, 3]}}                 | false",
            "{flags: {$bitsAllSet: []}}                     | true",  // nothing to hold: holds
            "{flags: {$bitsAllSet: 0}}                      | true",
            "{flags: {$bitsAnySet: [0, 3]}}                 | false",
            "{flags: {$bitsAnySet: [0, 1]}}                 | true",
            "{flags: {$bitsAnySet: []}}                     | false", // no position set among none
            "{flags: {$bitsAllClear: 9}}                    | true",  // bits 0 and 3
            "{flags: {$bitsAllClear: 10}}                   | false",
            "{flags: {$bitsAnyClear: [1, 2]}}               | false",
            "{flags: {$bitsAnyClear: [1, 3]}}               | true",
            "{flags: {$bitsAllSet: {$binary: {base64: 'Bg==', subType: '00'}}}} | true", // a BinData mask: 0x06
            "{flags: {$bitsAllSet: 6.0}}                    | true",  // a whole double is a bitmask
            "{flags: {$bitsAllSet: {$numberDecimal: '6'}}}  | true",
            "{flags: {$bitsAllClear: [200]}}                | true",  // past 63: the sign bit, clear for 54
            "{negative: {$bitsAllSet: [1, 63, 100]}}        | true",  // sign-extended: every high bit set
            "{negative: {$bitsAnyClear: [0]}}               | true",
            "{negative: {$bitsAllClear: [100]}}             | false",
            "{long: {$bitsAllSet: [32]}}                    | true",  // an int64 has all 64 bits
            "{long: {$bitsAnySet: 4294967295}}              | false",
            "{whole: {$bitsAllSet: 6}}                      | true",  // an integral double is its number
            "{fractional: {$bitsAllSet: 0}}                 | false", // a fractional one matches nothing
            "{fractional: {$bitsAllClear: 0}}               | false",
            "{nan: {$bitsAllClear: 0}}                      | false",
            "{huge: {$bitsAllClear: 0}}                     | false", // beyond 64 bits
            "{decimal: {$bitsAllSet: 6}}                    | true",  // a decimal rounds half to even: 5.5 is 6
            "{bytes: {$bitsAllSet: [0, 15]}}                | true",
            "{bytes: {$bitsAllSet: 32769}}                  | true",  // bits 0 and 15 as a bitmask
            "{bytes: {$bitsAnySet: [1, 14]}}                | false",
            "{bytes: {$bitsAllClear: [16, 200]}}            | true",  // past its end: zero-extended
            "{bytes: {$bitsAnyClear: [0, 15]}}              | false",
            "{text: {$bitsAllClear: 0}}                     | false", // a string has no bits
            "{missing: {$bitsAllClear: 0}}                  | false", // nor a missing field
            "{batch: {$bitsAllSet: 2}}                      | true",  // any element of an array
            "{batch: {$bitsAllSet: 4}}                      | false",
            "{flags: {$not: {$bitsAnySet: 1}}}              | true",
            "{flags: {$bitsAllSet: 6, $bitsAllClear: 1}}    | true",
    })
    void bitTestsHoldAsMongodsMatcherReadsThem(String json, boolean expected) {
        assertEquals(expected, holds(json), json);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "{flags: {$bitsAllSet: -1}}               | data.commandMatches.flags.$bitsAllSet: a bitmask must be a whole number from 0"
                    + " to 2^63-1, not -1",
            "{flags: {$bitsAllSet: 1.5}}              | data.commandMatches.flags.$bitsAllSet: a bitmask must be a whole number from 0"
                    + " to 2^63-1, not 1.5",
            "{flags: {$bitsAnySet: 1e19}}             | data.commandMatches.flags.$bitsAnySet: a bitmask must be a whole number",
            "{flags: {$bitsAnySet: NaN}}              | data.commandMatches.flags.$bitsAnySet: a bitmask must be a whole number",
            "{flags: {$bitsAnySet: {$numberDecimal: '2.5'}}} | data.commandMatches.flags.$bitsAnySet: a bitmask must be a whole number",
            "{flags: {$bitsAllClear: [1, -2]}}        | data.commandMatches.flags.$bitsAllClear.1: a bit position must be a whole number"
                    + " from 0 to 2147483647, not -2",
            "{flags: {$bitsAllClear: [0.5]}}          | data.commandMatches.flags.$bitsAllClear.0: a bit position must be",
            "{flags: {$bitsAllClear: ['1']}}          | data.commandMatches.flags.$bitsAllClear.0: a bit position must be a whole"
                    + " number from 0 to 2147483647, not \"1\"",
            "{flags: {$bitsAllClear: [2147483648]}}   | data.commandMatches.flags.$bitsAllClear.0: a bit position must be",
            "{flags: {$bitsAnyClear: '6'}}            | data.commandMatches.flags.$bitsAnyClear: takes a bitmask (a whole number from"
                    + " 0), an array of bit positions or BinData, not \"6\"",
            "{flags: {$bitsAnyClear: null}}           | data.commandMatches.flags.$bitsAnyClear: takes a bitmask",
    })
    void whatIsNoBitmaskIsRefusedNamingTheOperator(String json, String message) {
        RuleException e = assertThrows(RuleException.class, () -> holds(json));
        assertTrue(e.getMessage().startsWith(message), e.getMessage());
    }
}
