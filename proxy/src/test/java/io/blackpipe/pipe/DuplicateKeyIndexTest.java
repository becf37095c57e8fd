package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.bson.BsonDocument;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** jongodb's duplicate key messages (as 0.1.6 words them) read into mongod's keyPattern and keyValue, or left alone. */
class DuplicateKeyIndexTest {
    private static final String DOCUMENT = "{_id: {$oid: '6b060491c64892b96cf40aab'}, email: 'a@x', 'user_id': {$numberLong: '7'},"
            + " a: {b: 'x, y: z'}, n_x: 5, tags: ['t1', 't2'], sub: [{k: 1}]}";

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "_id_ dup key: { _id: ObjectId('6b060491c64892b96cf40aab') }|{_id: 1}|{_id: {$oid: '6b060491c64892b96cf40aab'}}",
            "email_1 dup key: { email: a@x }|{email: 1}|{email: 'a@x'}",
            // a field with "_" in its name, and a value with ", " and ": " in it
            "user_id_-1 dup key: { user_id: 7 }|{user_id: -1}|{user_id: {$numberLong: '7'}}",
            "a.b_1_n_x_-1 dup key: { a.b: x, y: z, n_x: 5 }|{'a.b': 1, n_x: -1}|{'a.b': 'x, y: z', n_x: 5}",
            // a field the document lacks is keyed as null, as mongod keys it
            "email_1_phone_1 dup key: { email: a@x, phone: null }|{email: 1, phone: 1}|{email: 'a@x', phone: null}"})
    void aDefaultNamedIndexWhoseFieldsTheKeyNamesIsRead(String message, String pattern, String value) {
        DuplicateKeyIndex index = DuplicateKeyIndex.of("E11000 duplicate key error index: " + message, BsonDocument.parse(DOCUMENT));
        assertEquals(BsonDocument.parse(pattern), index.pattern());
        assertEquals(BsonDocument.parse(value), index.value());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "E11000 duplicate key error index: custom dup key: { email: a@x }",       // a name of the user's: no directions
            "E11000 duplicate key error index: email_1 dup key: { mail: a@x }",       // the key names another field
            "E11000 duplicate key error index: email_1_n_x_1 dup key: { n_x: 5, email: a@x }", // not in the name's order
            "E11000 duplicate key error index: loc_2dsphere dup key: { loc: x }",     // not a direction
            "E11000 duplicate key error index: tags_1 dup key: { tags: t1 }",         // multikey: which element?
            "E11000 duplicate key error index: sub.k_1 dup key: { sub.k: 1 }",        // under an array
            "E11000 duplicate key error",                                            // no index named
            "E11000 duplicate key error collection: db.c index: email_1 dup key: { email: \"a@x\" } trailing"})
    void anythingElseIsLeftAlone(String message) {
        assertNull(DuplicateKeyIndex.of(message, BsonDocument.parse(DOCUMENT)));
    }
}
