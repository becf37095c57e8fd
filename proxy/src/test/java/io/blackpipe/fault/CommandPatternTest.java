package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.FakeInterception.Facts;
import io.blackpipe.observe.Attempt;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** commandMatches: which commands a pattern holds, as a MongoDB query's equality and field operators read them, and what it refuses. */
class CommandPatternTest {
    private static final BsonDocument INSERT = BsonDocument.parse("{insert: 'orders', ordered: true, $db: 'shop', lsid: {id: 1},"
            + " documents: [{_id: 1, sku: 'A1', qty: 5, tags: ['new', 'red'], size: {w: 2, h: 3}},"
            + " {_id: 2, sku: 'B2', qty: {$numberLong: '7'}, price: 1.5, note: null}]}");

    private static CommandPattern pattern(String json) {
        return CommandPattern.parse("data.commandMatches", BsonDocument.parse(json));
    }

    private static boolean holds(String json) {
        return pattern(json).matches(INSERT);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "{insert: 'orders'}                                  | true",
            "{insert: 'other'}                                   | false",
            "{'lsid.id': 1}                                      | true",
            "{'documents.sku': 'B2'}                             | true",  // any element of the array
            "{'documents.sku': 'C3'}                             | false",
            "{'documents.1.sku': 'B2'}                           | true",  // the element a numeric part names
            "{'documents.0.sku': 'B2'}                           | false",
            "{'documents.0.sku': 'A1'}                           | true",  // index 0 is an index too
            "{'documents.1.sku': 'A1'}                           | false", // only the element named
            "{'documents.2.sku': 'A1'}                           | false", // past the end: no element
            "{'documents.tags.x': 'new'}                         | false", // a name is no index into an array
            "{'documents.qty': '5'}                              | false", // a number is not its string
            "{insert: 5}                                         | false", // nor a string a number
            "{'documents.size': {w: 2}}                          | false", // a document is equal whole
            "{'documents.size': {w: 2, h: 3, d: 1}}              | false",
            "{'documents.tags': ['new']}                         | false", // and an array
            "{'documents.tags': 'red'}                           | true",  // a value matches an array holding it
            "{'documents.tags': ['new', 'red']}                  | true",  // and the whole array
            "{'documents.tags': ['red', 'new']}                  | false", // in its order
            "{'documents.qty': 7}                                | true",  // an int64 by an int32: numbers by value
            "{'documents.qty': 5.0}                              | true",
            "{'documents.qty': {$numberDecimal: '7.00'}}         | true",
            "{'documents.qty': 6}                                | false",
            "{'documents.price': {$numberDecimal: '1.5'}}        | true",
            "{'documents.size': {w: 2, h: 3}}                    | true",
            "{'documents.size': {h: 3, w: 2}}                    | false", // a document field by field in order
            "{'documents.size': {w: 2.0, h: {$numberLong: '3'}}} | true",
            "{'documents.note': null}                            | true",  // null, and missing: the first has none
            "{'documents.0.note': null}                          | true",
            "{'documents.sku': null}                             | false",
            "{writeConcern: null}                                | true",
            "{ordered: true, 'documents._id': 2}                 | true",  // every field must match
            "{ordered: false, 'documents._id': 2}                | false",
            "{'ordered.x': true}                                 | false", // a path through a scalar holds nothing
            "{'ordered.x': null}                                 | true",  // but a missing field, which null matches
            "{'documents.note.x': null}                          | true",
            "{'documents.12345678901.sku': 'A1'}                 | false", // too long for an index: a field name, none here
    })
    void aPatternHoldsWhatAQuerysEqualityWouldMatch(String json, boolean expected) {
        assertEquals(expected, holds(json), json);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "{'documents.qty': {$gt: 6}}                         | true",  // the int64 7
            "{'documents.qty': {$gt: 7}}                         | false",
            "{'documents.qty': {$gte: {$numberDecimal: '7.0'}}}  | true",
            "{'documents.qty': {$lt: 5}}                         | false",
            "{'documents.qty': {$lte: 5.0}}                      | true",
            "{'documents.qty': {$lte: 4}}                        | false",
            "{'documents.qty': {$gt: 5, $lt: 7}}                 | true",  // each by any element (7, 5), as a query without $elemMatch
            "{'documents.qty': {$gte: 5, $lt: 7}}                | true",
            "{'documents.qty': {$gt: '5'}}                       | false", // a number is neither above nor below a string
            "{'documents.sku': {$gt: 'B'}}                       | true",  // strings by their order
            "{'documents.sku': {$gte: 'C'}}                      | false",
            "{'documents.tags': {$gt: 'q'}}                      | true",  // an array's element: 'red'
            "{'documents.sku': {$eq: 'B2'}}                      | true",
            "{'documents.sku': {$ne: 'B2'}}                      | false", // not when any element holds it
            "{'documents.sku': {$ne: 'C3'}}                      | true",
            "{'documents.note': {$ne: null}}                     | false", // the first has no note, the second null
            "{'documents.price': {$ne: null}}                    | false", // the first has none: missing is null
            "{'documents.sku': {$ne: null}}                      | true",
            "{'documents.sku': {$in: ['C3', 'B2']}}              | true",
            "{'documents.sku': {$in: ['C3']}}                    | false",
            "{'documents.sku': {$in: [{$regularExpression: {pattern: '^b', options: 'i'}}]}} | true",
            "{'documents.sku': {$nin: ['C3', 'D4']}}             | true",
            "{'documents.sku': {$nin: ['A1']}}                   | false",
            "{writeConcern: {$in: [null]}}                       | true",  // a missing field is in [null]
            "{writeConcern: {$nin: ['majority']}}                | true",
            "{'documents.price': {$exists: true}}                | true",  // one document has it
            "{'documents.price.x': {$exists: true}}              | false",
            "{writeConcern: {$exists: false}}                    | true",
            "{ordered: {$exists: false}}                         | false",
            "{'documents.note': {$exists: true}}                 | true",  // null is there
            "{'documents.price': {$exists: 1}}                   | true",  // a number as its truth, as in a query
            "{writeConcern: {$exists: 0}}                        | true",
            "{ordered: {$exists: 0}}                             | false",
            "{documents: {$size: 2}}                             | true",
            "{documents: {$size: 1}}                             | false",
            "{documents: {$size: {$numberLong: '2'}}}            | true",  // any whole number
            "{documents: {$size: 2.0}}                           | true",
            "{writeConcern: {$size: 0}}                          | false", // a missing field has no size
            "{'documents.tags': {$size: 2}}                      | true",
            "{insert: {$size: 0}}                                | false", // a string has no size
            "{'documents.sku': {$regex: '^B'}}                   | true",
            "{'documents.sku': {$regex: '^b'}}                   | false",
            "{'documents.sku': {$regex: '^b', $options: 'i'}}    | true",  // read as a regular expression value
            "{'documents.sku': {$regex: {$regularExpression: {pattern: '^b', options: ''}}, $options: 'i'}} | true", // a regex and flags
            "{'documents.sku': {$regularExpression: {pattern: '2$', options: ''}}} | true",
            "{'documents.tags': {$regex: 'ed'}}                  | true",  // an array's element
            "{'documents.qty': {$regex: '5'}}                    | false", // a number is no string
            "{writeConcern: {$regex: 'm'}}                       | false", // nor a missing field
            "{$db: {$regex: '^sh'}, 'documents.qty': {$in: [7]}} | true",  // a command's own $-fields are fields
            "{'$readPreference.mode': 'secondary'}               | false",
    })
    void operatorsHoldAsAQuerysFieldOperatorsWould(String json, boolean expected) {
        assertEquals(expected, holds(json), json);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "{'documents.qty': {$not: {$gt: 6}}}                 | false", // the 7 is above 6
            "{'documents.qty': {$not: {$gt: 7}}}                 | true",
            "{'documents.price': {$not: {$gt: 1}}}               | false", // the second's 1.5
            "{'documents.price': {$not: {$gt: 2}}}               | true",  // the first has none: $not holds for a missing field
            "{'documents.sku': {$not: {$regularExpression: {pattern: '^C', options: ''}}}} | true",
            "{'documents.sku': {$not: {$regex: '^b', $options: 'i'}}} | false",
            "{'documents.tags': {$not: {$size: 2}}}              | false",
            "{documents: {$elemMatch: {sku: 'B2', qty: 7}}}      | true",  // one element holds both
            "{documents: {$elemMatch: {sku: 'A1', qty: 7}}}      | false", // two elements hold one each
            "{'documents.sku': 'A1', 'documents.qty': 7}         | true",  // which paths alone allow
            "{documents: {$elemMatch: {qty: {$gt: 5, $lt: 8}}}}  | true",
            "{documents: {$elemMatch: {qty: {$gt: 5, $lt: 7}}}}  | false", // unlike {'documents.qty': {$gt: 5, $lt: 7}}
            "{documents: {$elemMatch: {'size.w': 2, tags: 'red'}}} | true",
            "{documents: {$elemMatch: {$or: [{sku: 'C3'}, {note: null, _id: 2}]}}} | true",
            "{'documents.tags': {$elemMatch: {$regex: '^r'}}}    | true",  // operators test the element itself
            "{'documents.tags': {$elemMatch: {$gt: 'red'}}}      | false",
            "{'documents.qty': {$elemMatch: {$gt: 5}}}           | false", // no array there
            "{'documents.tags': {$elemMatch: {x: 1}}}            | false", // a pattern holds in no string element
            "{'documents.tags': {$all: ['red', 'new']}}          | true",
            "{'documents.tags': {$all: ['red', 'blue']}}         | false",
            "{'documents.tags': {$all: []}}                      | false", // $all of nothing matches nothing, as in a query
            "{'documents.sku': {$all: ['A1', {$regularExpression: {pattern: '2$', options: ''}}]}} | true", // by any elements
            "{'documents.qty': {$type: 'long'}}                  | true",  // the second's int64
            "{'documents.qty': {$type: 'int'}}                   | true",  // the first's int32
            "{'documents.qty': {$type: 'decimal'}}               | false",
            "{'documents.qty': {$type: 'number'}}                | true",
            "{'documents.qty': {$type: ['string', 'double']}}    | false",
            "{'documents.price': {$type: 1}}                     | true",
            "{'documents.tags': {$type: 'array'}}                | true",
            "{'documents.tags': {$type: 'string'}}               | true",  // an array's elements
            "{'documents.tags': {$type: 'int'}}                  | false", // none of them an int
            "{'documents.size': {$type: 3}}                      | true",
            "{'documents.note': {$type: 'null'}}                 | true",
            "{writeConcern: {$type: 'null'}}                     | false", // a missing field is of no type
            "{'lsid.id': {$type: 16}}                            | true",
            "{'documents.qty': {$mod: [2, 1]}}                   | true",  // 5 and 7 are odd
            "{'documents.qty': {$mod: [5, 0]}}                   | true",
            "{'documents.qty': {$mod: [3, 0]}}                   | false",
            "{'documents.price': {$mod: [2, 1]}}                 | true",  // 1.5 truncated to 1
            "{'documents.price': {$mod: [1.9, 0.9]}}             | true",  // [1, 0]
            "{'documents.sku': {$mod: [2, 0]}}                   | false",
            "{writeConcern: {$mod: [2, 0]}}                      | false", // a missing field has no remainder
    })
    void notElemMatchAllTypeAndModHoldAsInAQuery(String json, boolean expected) {
        assertEquals(expected, holds(json), json);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "{$or: [{insert: 'other'}, {'documents.sku': 'B2'}]}            | true",
            "{$or: [{insert: 'other'}, {'documents.sku': 'C3'}]}            | false",
            "{$and: [{'documents.qty': {$gt: 6}}, {ordered: true}]}         | true",
            "{$and: [{'documents.qty': {$gt: 6}}, {ordered: false}]}        | false",
            "{$nor: [{insert: 'other'}, {update: 'orders'}]}                | true",
            "{$nor: [{insert: 'orders'}]}                                   | false",
            "{insert: 'orders', $or: [{ordered: false}, {$and: [{$db: 'shop'}]}]} | true",
            "{insert: 'other', $or: [{ordered: true}]}                      | false", // with the fields beside it
    })
    void andOrAndNorJoinPatterns(String json, boolean expected) {
        assertEquals(expected, holds(json), json);
    }

    @Test
    void orPicksOneOfSeveralCommands() {
        CommandPattern ordersWrites = pattern("{$or: [{insert: 'orders'}, {update: 'orders'}, {delete: 'orders'}]}");
        assertTrue(ordersWrites.matches(BsonDocument.parse("{update: 'orders', updates: []}")));
        assertTrue(ordersWrites.matches(BsonDocument.parse("{delete: 'orders', deletes: []}")));
        assertFalse(ordersWrites.matches(BsonDocument.parse("{update: 'carts', updates: []}")));
        assertFalse(ordersWrites.matches(BsonDocument.parse("{find: 'orders'}")));
    }

    @Test
    void orderIsTheServersBetweenValuesOfOneKindOnly() {
        BsonDocument command = BsonDocument.parse("{n: NaN, big: {$numberDecimal: '1E+400'}, up: Infinity, when: {$date: '2026-11-21T00:00:00Z'},"
                + " id: {$oid: '6b048f4015bcab63a5a5c5a0'}, ts: {$timestamp: {t: 4294967295, i: 1}}, flag: true,"
                + " emoji: '\uD83D\uDE00', bmp: '\uFFFD'}");
        assertFalse(pattern("{n: {$lt: 5}}").matches(command), "NaN is below nothing a query asks for");
        assertFalse(pattern("{n: {$gt: 5}}").matches(command));
        assertTrue(pattern("{n: {$gte: NaN}}").matches(command), "but is NaN");
        assertFalse(pattern("{n: {$gt: NaN}}").matches(command));
        assertTrue(pattern("{big: {$gt: 1E300}}").matches(command), "a decimal beyond a double's range, by its value");
        assertTrue(pattern("{big: {$lt: Infinity}}").matches(command), "and below infinity");
        assertTrue(pattern("{up: {$gt: {$numberDecimal: '1E+6000'}}}").matches(command));
        assertTrue(pattern("{when: {$gte: {$date: '2026-01-01T00:00:00Z'}}}").matches(command));
        assertFalse(pattern("{when: {$gt: 1}}").matches(command), "a date is no number");
        assertTrue(pattern("{id: {$gt: {$oid: '6b048f4015bcab63a5a5c59f'}}}").matches(command));
        assertTrue(pattern("{ts: {$gt: {$timestamp: {t: 1, i: 1}}}}").matches(command), "timestamps unsigned");
        assertTrue(pattern("{flag: {$gt: false}}").matches(command));
        assertTrue(pattern("{emoji: {$gt: '\uFFFD'}}").matches(command), "U+1F600 is above U+FFFD, as in UTF-8 bytes");
        assertTrue(pattern("{bmp: {$lt: '\uD83D\uDE00'}}").matches(command));
    }

    @Test
    void aPatternPrintsAsItWasGiven() {
        String json = "{\"documents.qty\": {\"$gt\": 5}, \"documents.sku\": \"A1\"}";
        assertEquals(json, pattern(json).toString());
    }

    @Test
    void notANumberEqualsItselfAndMinusZeroIsZero() {
        BsonDocument command = BsonDocument.parse("{x: NaN, y: -0.0, z: {$numberDecimal: '-0'}}");
        assertTrue(pattern("{x: NaN}").matches(command));
        assertFalse(pattern("{x: 1}").matches(command));
        assertTrue(pattern("{y: 0}").matches(command));
        assertTrue(pattern("{z: 0}").matches(command));
        assertTrue(pattern("{x: {$numberDecimal: 'NaN'}}").matches(command));
        BsonDocument infinite = BsonDocument.parse("{up: Infinity, down: -Infinity, dec: {$numberDecimal: '-Infinity'}}");
        assertTrue(pattern("{up: Infinity, down: -Infinity}").matches(infinite));
        assertTrue(pattern("{dec: -Infinity}").matches(infinite), "a decimal infinity is the double's");
        assertFalse(pattern("{up: -Infinity}").matches(infinite), "infinities compare by sign");
        assertFalse(pattern("{dec: Infinity}").matches(infinite));
        assertFalse(pattern("{up: NaN}").matches(infinite), "NaN is no infinity");
        assertFalse(pattern("{x: Infinity}").matches(command));
        BsonDocument huge = BsonDocument.parse("{big: {$numberDecimal: '1E+400'}, tiny: {$numberDecimal: '1E-400'}}");
        assertFalse(pattern("{big: Infinity}").matches(huge), "a decimal beyond a double's range is no infinity");
        assertFalse(pattern("{big: {$numberDecimal: '2E+500'}}").matches(huge));
        assertTrue(pattern("{big: {$numberDecimal: '10E+399'}}").matches(huge));
        assertFalse(pattern("{tiny: 0}").matches(huge), "nor is a tiny one 0");
        assertFalse(pattern("{tiny: {$numberDecimal: '3E-500'}}").matches(huge));
        assertFalse(pattern("{'tags.x': null}").matches(BsonDocument.parse("{tags: ['a', 5]}")), "an array of scalars holds no field");
        BsonDocument tenth = BsonDocument.parse("{d: 0.1, e: 0.5}");
        assertFalse(pattern("{d: {$numberDecimal: '0.1'}}").matches(tenth), "a double 0.1 is not exactly the decimal 0.1");
        assertTrue(pattern("{e: {$numberDecimal: '0.5'}}").matches(tenth), "0.5 is");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "{}                          | data.commandMatches: must be a non-empty document",
            "{'': 1}                     | data.commandMatches: '' is not a dotted path",
            "{'documents..sku': 1}       | data.commandMatches: 'documents..sku' is not a dotted path",
            "{'documents.': 1}           | data.commandMatches: 'documents.' is not a dotted path",
            "{'.sku': 1}                 | data.commandMatches: '.sku' is not a dotted path",
            "{$or: []}                   | data.commandMatches.$or: must be a non-empty array of patterns",
            "{$and: {a: 1}}              | data.commandMatches.$and: must be a non-empty array of patterns",
            "{$nor: [{}]}                | data.commandMatches.$nor.0: must be a non-empty document",
            "{$or: [{a: 1}, 'b']}        | data.commandMatches.$or.1: must be a non-empty document",
            "{$or: [{'documents.qty': {$foo: 1}}]} | data.commandMatches.$or.0.documents.qty.$foo: not an operator commandMatches takes",
            "{$expr: {$gt: ['$qty', 5]}} | data.commandMatches: '$expr': of a query's top-level operators only $and, $or and $nor are supported",
            "{$not: {a: 1}}              | data.commandMatches: '$not': of a query's top-level operators only",
            "{'documents.qty': {$gt: {a: 1}}}          | data.commandMatches.documents.qty.$gt: $gt orders numbers, strings,"
                    + " ObjectIds, booleans, dates and timestamps; not a document",
            "{'documents.qty': {$lte: null}}           | data.commandMatches.documents.qty.$lte: $lte orders numbers",
            "{'documents.qty': {$in: 5}}               | data.commandMatches.documents.qty.$in: must be an array of the values"
                    + " to match, not a number",
            "{'documents.qty': {$nin: [{$gt: 1}]}}     | data.commandMatches.documents.qty.$nin: holds an operator ($gt)",
            "{'documents.qty': {$exists: 'yes'}}       | data.commandMatches.documents.qty.$exists: must be true or false, not a string",
            "{'documents': {$size: -1}}                | data.commandMatches.documents.$size: must be a whole number of elements",
            "{'documents': {$size: 1.5}}               | data.commandMatches.documents.$size: must be a whole number of elements, 0 or more, not 1.5",
            "{'documents': {$size: '2'}}               | data.commandMatches.documents.$size: must be a whole number of elements, 0 or"
                    + " more, not \"2\"",
            "{'documents.sku': {$regex: 5}}            | data.commandMatches.documents.sku.$regex: must be a pattern string, not a number",
            "{'documents.sku': {$regex: '(A'}}         | data.commandMatches.documents.sku.$regex: not a regular expression: Unclosed group",
            "{'documents.sku': {$regex: 'A', $options: 5}} | data.commandMatches.documents.sku.$regex: $options must be a string",
            "{'documents.sku': {$regex: '^A', $options: 'q'}} | data.commandMatches.documents.sku: 'q' is not a regular expression option",
            "{'documents.sku': {$options: 'i'}}        | data.commandMatches.documents.sku.$options: $options without $regex",
            "{'documents.sku': {$ne: {$regularExpression: {pattern: 'A', options: ''}}}} | data.commandMatches.documents.sku.$ne: $ne takes a"
                    + " value, not a regular expression",
            "{'documents.qty': {$gt: 5, $foo: 1}}      | data.commandMatches.documents.qty.$foo: not an operator commandMatches takes"
                    + " (it takes $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $all, $exists, $type, $size, $mod, $regex, $options,"
                    + " $elemMatch, $not, $bitsAllSet, $bitsAllClear, $bitsAnySet, $bitsAnyClear)",
            "{'documents.qty': {$gt: 5, max: 9}}       | data.commandMatches.documents.qty.max: a field among operators",
            "{'documents.qty': {$not: 5}}              | data.commandMatches.documents.qty.$not: takes field operators or a regular"
                    + " expression, as in a query, not 5",
            "{'documents.qty': {$not: {max: 5}}}       | data.commandMatches.documents.qty.$not: takes field operators",
            "{'documents.qty': {$not: {$gt: 1, $foo: 1}}} | data.commandMatches.documents.qty.$not.$foo: not an operator",
            "{documents: {$elemMatch: 5}}              | data.commandMatches.documents.$elemMatch: must be a non-empty document of the"
                    + " conditions one element must hold, not 5",
            "{documents: {$elemMatch: {}}}             | data.commandMatches.documents.$elemMatch: must be a non-empty document of the"
                    + " conditions one element must hold",
            "{documents: {$elemMatch: {qty: {$gt: 1, $foo: 1}}}} | data.commandMatches.documents.$elemMatch.qty.$foo: not an operator",
            "{'documents.tags': {$elemMatch: {$gt: 1, max: 2}}} | data.commandMatches.documents.tags.$elemMatch.max: a field among operators",
            "{'documents.tags': {$all: 'red'}}         | data.commandMatches.documents.tags.$all: must be an array of the values the"
                    + " field must all hold, not a string",
            "{'documents.tags': {$all: [{$gt: 'a'}]}}  | data.commandMatches.documents.tags.$all: holds an operator ($gt)",
            "{'documents.qty': {$type: 'integer'}}     | data.commandMatches.documents.qty.$type: 'integer' is not a BSON type (the"
                    + " server's aliases: double, string, object, array,",
            "{'documents.qty': {$type: 99}}            | data.commandMatches.documents.qty.$type: 99 is not a BSON type",
            "{'documents.qty': {$type: 1.5}}           | data.commandMatches.documents.qty.$type: 1.5 is not a BSON type",
            "{'documents.qty': {$type: []}}            | data.commandMatches.documents.qty.$type: must name at least one type",
            "{'documents.qty': {$mod: [0, 1]}}         | data.commandMatches.documents.qty.$mod: the divisor must not be 0",
            "{'documents.qty': {$mod: [2]}}            | data.commandMatches.documents.qty.$mod: must be [divisor, remainder], two numbers, not [2]",
            "{'documents.qty': {$mod: 2}}              | data.commandMatches.documents.qty.$mod: must be [divisor, remainder], two"
                    + " numbers, not 2",
            "{'documents.qty': {$mod: [2, NaN]}}       | data.commandMatches.documents.qty.$mod: must be [divisor, remainder]",
    })
    void whatIsNoPatternIsRefusedNamingTheField(String json, String message) {
        RuleException e = assertThrows(RuleException.class, () -> pattern(json));
        assertTrue(e.getMessage().startsWith(message), e.getMessage());
    }

    /** As in a query, an operator on an array of numbers holds when one element does. */
    @Test
    void aModuloHoldsForAnArrayByAnyOfItsNumbers() {
        BsonDocument delete = BsonDocument.parse("{delete: 'orders', ids: [3, 4]}");
        assertTrue(pattern("{ids: {$mod: [2, 0]}}").matches(delete), "4");
        assertFalse(pattern("{ids: {$mod: [5, 0]}}").matches(delete));
    }

    /** A find's filter may hold a regular expression: a pattern finds it as a query finds a stored one, by being the same expression. */
    @Test
    void aRegularExpressionMatchesTheSameExpressionHeldAsAValue() {
        BsonDocument find = BsonDocument.parse("{find: 'orders', filter: {sku: {$regularExpression: {pattern: '^A', options: 'i'}}}}");
        assertTrue(pattern("{'filter.sku': {$regularExpression: {pattern: '^A', options: 'i'}}}").matches(find));
        assertTrue(pattern("{'filter.sku': {$regex: '^A', $options: 'i'}}").matches(find));
        assertFalse(pattern("{'filter.sku': {$regex: '^A'}}").matches(find), "other flags: another expression");
        assertFalse(pattern("{'filter.sku': {$regex: '^B', $options: 'i'}}").matches(find));
    }

    @Test
    void aPatternMustBeADocument() {
        for (BsonValue notOne : new BsonValue[] {new org.bson.BsonString("documents.sku"), new org.bson.BsonArray(), null}) {
            RuleException e = assertThrows(RuleException.class, () -> CommandPattern.parse("data.commandMatches", notOne));
            assertEquals("data.commandMatches", e.field());
        }
    }

    @Test
    void aRuleParsesItAndItsMatcherDecodesTheCommandOnlyOnceEverythingElseMatched() {
        Rule rule = new RuleParser(1).parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                + " data: {failCommands: ['insert'], appName: 'shop', commandMatches: {'documents.sku': 'B2'}, closeConnection: true}}"));
        AtomicInteger decoded = new AtomicInteger();
        Attempt ofShop = Facts.insert().attempt("shop", 1);
        Attempt ofAnotherApp = Facts.insert().attempt("other", 1);
        assertTrue(rule.matcher().matches(ofShop, FakeInterception.primary(17), "x:1", () -> {
            decoded.incrementAndGet();
            return INSERT;
        }));
        assertFalse(rule.matcher().matches(ofAnotherApp, FakeInterception.primary(17), "x:1", () -> {
            decoded.incrementAndGet();
            return INSERT;
        }));
        assertEquals(1, decoded.get(), "another app's insert is passed over before its command is read");
        assertFalse(rule.matcher().matches(ofShop, FakeInterception.primary(17), "x:1", () -> BsonDocument.parse("{insert: 'orders'}")));
        assertEquals(Set.of("insert"), rule.matcher().commands());
    }
}
