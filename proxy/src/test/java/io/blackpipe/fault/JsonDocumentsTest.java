package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.bson.BsonDocument;
import org.bson.json.JsonParseException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The one-document JSON that `fault add --json` and the admin API take: a rule, and nothing pasted after it. */
class JsonDocumentsTest {
    @Test
    void oneDocumentWithWhiteSpaceAroundIt() {
        assertEquals(BsonDocument.parse("{mode: 'alwaysOn', data: {failCommands: ['find']}}"),
                JsonDocuments.parseOne("  \n{\"mode\": \"alwaysOn\", \"data\": {\"failCommands\": [\"find\"]}}\n\t "));
        assertEquals(new BsonDocument(), JsonDocuments.parseOne("{}"));
    }

    @Test
    void anythingAfterTheDocumentIsRefusedQuotingItsStart() {
        JsonParseException two = assertThrows(JsonParseException.class, () -> JsonDocuments.parseOne("{\"a\": 1} {\"b\": 2}"));
        assertEquals("trailing content after the document: '{\"b\": 2}' (one document only)", two.getMessage());
        String forty = "x".repeat(40);
        assertEquals("trailing content after the document: '" + forty + "' (one document only)",
                assertThrows(JsonParseException.class, () -> JsonDocuments.parseOne("{}" + forty)).getMessage());
        assertEquals("trailing content after the document: '" + forty + "...' (one document only)",
                assertThrows(JsonParseException.class, () -> JsonDocuments.parseOne("{} " + forty + "y")).getMessage(),
                "past 40 characters it is cut");
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', value = {
            "[{\"a\": 1}] | an array",
            "'\"rule\"'   | a string",
            "true       | a boolean",
            "null       | null",
            "42         | a number",
            "2.5        | a number",
            "''         | nothing (the text is empty)",
    })
    void aValueThatIsNoDocumentIsNamed(String json, String kind) {
        JsonParseException e = assertThrows(JsonParseException.class, () -> JsonDocuments.parseOne(json));
        assertEquals(kind + " where one document {...} was expected", e.getMessage());
    }

    /**
     * A field given twice is refused, naming it: it kept its last value silently, where mongod takes the first, so
     * {mode: {times: 1}, mode: "alwaysOn"} was a rule that never stopped.
     */
    @Test
    void aFieldGivenTwiceIsRefusedAtAnyDepth() {
        JsonParseException top = assertThrows(JsonParseException.class,
                () -> JsonDocuments.parseOne("{mode: {times: 1}, mode: 'alwaysOn'}"));
        assertEquals("'mode' is given twice; give each field once", top.getMessage());
        JsonParseException nested = assertThrows(JsonParseException.class,
                () -> JsonDocuments.parseOne("{data: {failCommands: ['find'], errorCode: 2, errorCode: 91}}"));
        assertEquals("'data.errorCode' is given twice; give each field once", nested.getMessage());
        JsonParseException inArray = assertThrows(JsonParseException.class,
                () -> JsonDocuments.parseOne("{data: {commandMatches: {$and: [{a: 1, a: 2}]}}}"));
        assertEquals("'data.commandMatches.$and.0.a' is given twice; give each field once", inArray.getMessage());
        assertEquals(BsonDocument.parse("{a: {b: [1, {c: 2}], n: {$numberLong: '5'}}}"),
                JsonDocuments.parseOne("{a: {b: [1, {c: 2}], n: {$numberLong: '5'}}}"), "everything else as BsonDocument.parse reads it");
    }
}
