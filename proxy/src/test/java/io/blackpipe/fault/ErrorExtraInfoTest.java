package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** failCommand's errorExtraInfo: the fields an error's reply carries after codeName, for the codes whose errors have them. */
class ErrorExtraInfoTest {
    private final RuleParser parser = new RuleParser(1);

    private Rule parseData(String data) {
        return parser.parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: " + data + "}"));
    }

    private static BsonDocument answer(Rule rule, FakeInterception command) {
        rule.action().apply(command);
        assertEquals(List.of("answer"), command.calls);
        return command.answered;
    }

    @Test
    void theExtraInformationFollowsCodeNameAsMongodSerializesIt() {
        Rule rule = parseData("{failCommands: ['findAndModify'], errorCode: 11000,"
                + " errorExtraInfo: {keyPattern: {sku: 1}, keyValue: {sku: 'A1'}}}");
        BsonDocument reply = answer(rule, new FakeInterception(FakeInterception.Facts.command("findAndModify").build(),
                FakeInterception.primary(21)));
        assertEquals(List.of("ok", "errmsg", "code", "codeName", "keyPattern", "keyValue"), List.copyOf(reply.keySet()));
        assertEquals(BsonDocument.parse("{sku: 1}"), reply.getDocument("keyPattern"));
        assertEquals(BsonDocument.parse("{sku: 'A1'}"), reply.getDocument("keyValue"));
        assertEquals("DuplicateKey", reply.getString("codeName").getValue());
    }

    @Test
    void theComputedLabelsStillFollowAndEachReplyHasItsOwnCopy() {
        Rule rule = parseData("{failCommands: ['findAndModify'], error: 'StaleConfig',"
                + " errorExtraInfo: {ns: 'db.c', vReceived: 1, vWanted: 2}}");
        FakeInterception retryable = new FakeInterception(FakeInterception.Facts.command("findAndModify").txnNumber(1).build(),
                FakeInterception.primary(21));
        BsonDocument first = answer(rule, retryable);
        assertEquals(List.of("ok", "errmsg", "code", "codeName", "ns", "vReceived", "vWanted"), List.copyOf(first.keySet()),
                "StaleConfig is no retryable-write code: no labels");
        Rule duplicate = parseData("{failCommands: ['findAndModify'], errorCode: 11000, errorExtraInfo: {keyValue: {sku: 'A1'}}}");
        FakeInterception.Facts findAndModify = FakeInterception.Facts.command("findAndModify");
        answer(duplicate, new FakeInterception(findAndModify.build(), FakeInterception.primary(21)))
                .getDocument("keyValue").put("sku", new org.bson.BsonString("changed by the first reply's reader"));
        BsonDocument second = answer(duplicate, new FakeInterception(findAndModify.build(), FakeInterception.primary(21)));
        assertEquals(BsonDocument.parse("{sku: 'A1'}"), second.getDocument("keyValue"), "a reply's reader cannot change the rule");

        Rule labelled = parseData("{failCommands: ['update'], errorCode: 91, errorExtraInfo: {remainingQuiesceTimeMillis: 500}}");
        BsonDocument shutdown = answer(labelled, FakeInterception.retryableInsert());
        assertEquals(500, shutdown.getInt32("remainingQuiesceTimeMillis").getValue());
        assertTrue(shutdown.getArray("errorLabels").contains(new org.bson.BsonString("RetryableWriteError")));
        assertTrue(List.copyOf(shutdown.keySet()).indexOf("remainingQuiesceTimeMillis") < List.copyOf(shutdown.keySet()).indexOf("errorLabels"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "errorCode: 11000, errorExtraInfo: 'x'|data.errorExtraInfo: must be a document",
            "closeConnection: true, errorExtraInfo: {a: 1}|data.errorExtraInfo: only meaningful with errorCode",
            "errorCode: 0, errorExtraInfo: {a: 1}|data.errorExtraInfo: only meaningful with errorCode",
            "errorCode: 10107, errorExtraInfo: {a: 1}|data.errorExtraInfo: error 10107 (NotWritablePrimary) carries no extra information",
            "errorCode: 11000, errorExtraInfo: {code: 2}|data.errorExtraInfo: 'code' is the error reply's own field",
            "errorCode: 11000, errorExtraInfo: {errorLabels: []}|data.errorExtraInfo: 'errorLabels' is the error reply's own field",
            "cannedReply: {ok: 0}, errorExtraInfo: {a: 1}|errorExtraInfo"})
    void aMistakenExtraInfoIsRefusedNamingTheField(String data, String message) {
        RuleException e = assertThrows(RuleException.class, () -> parseData("{failCommands: ['insert'], " + data + "}"));
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }
}
