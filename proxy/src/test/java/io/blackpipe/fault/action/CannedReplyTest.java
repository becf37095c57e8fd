package io.blackpipe.fault.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.FakeInterception;
import io.blackpipe.fault.Rule;
import io.blackpipe.fault.RuleException;
import io.blackpipe.fault.RuleParser;
import io.blackpipe.fault.Scenario;
import io.blackpipe.fault.ScenarioException;
import io.blackpipe.fault.ScenarioLoader;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CannedReplyTest {
    private static final String DUPLICATE_KEY = "{ok: 1, n: 0, writeErrors: [{index: 0, code: 11000, errmsg: 'E11000 duplicate key'}]}";

    private static Rule parse(String data) {
        return new RuleParser(1).parse("r", BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: " + data + "}"));
    }

    private static RuleException refused(String data) {
        return assertThrows(RuleException.class, () -> parse(data), data);
    }

    @Test
    void answersWithTheReplyExactlyAsWrittenAndNeverForwards() {
        Rule rule = parse("{failCommands: ['insert'], cannedReply: " + DUPLICATE_KEY + "}");
        assertEquals("cannedReply", rule.action().name());
        FakeInterception command = FakeInterception.retryableInsert();
        rule.action().apply(command);
        assertEquals(List.of("answer"), command.calls, "the member never sees the command");
        assertEquals(BsonDocument.parse(DUPLICATE_KEY), command.answered, "no field added, none changed, labels included");
    }

    @Test
    void theRuleDocumentLaterChangedDoesNotChangeTheReply() {
        BsonDocument data = BsonDocument.parse("{failCommands: ['find'], cannedReply: {ok: 1, cursor: {id: 0, ns: 'a.b', firstBatch: []}}}");
        CannedReply action = CannedReply.of(data);
        data.getDocument("cannedReply").put("ok", new org.bson.BsonInt32(0));
        FakeInterception command = FakeInterception.retryableInsert();
        action.apply(command);
        assertEquals(1, command.answered.getInt32("ok").getValue());
    }

    @Test
    void mayBeBlockedFirstAsAnErrorCanBe() {
        Rule rule = parse("{failCommands: ['find'], blockConnection: true, blockTimeMS: 50, cannedReply: {ok: 1}}");
        assertInstanceOf(BlockConnection.class, rule.action());
    }

    @ParameterizedTest
    @ValueSource(strings = {"'x'", "1", "[{ok: 1}]", "null"})
    void mustBeADocument(String value) {
        RuleException e = refused("{failCommands: ['find'], cannedReply: " + value + "}");
        assertEquals("data.cannedReply", e.field());
        assertTrue(e.getMessage().contains("must be a document"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"{n: 1}", "{ok: 'yes'}", "{ok: true}", "{}"})
    void needsANumericOk(String reply) {
        RuleException e = refused("{failCommands: ['find'], cannedReply: " + reply + "}");
        assertEquals("data.cannedReply.ok", e.field());
    }

    @ParameterizedTest
    @ValueSource(strings = {"errorCode: 91", "error: 'NotWritablePrimary'", "errorLabels: ['RetryableWriteError']",
            "writeConcernError: {code: 64}", "delayReplyMS: 10",
            "trickleReplyBytes: 64, trickleReplyIntervalMS: 10", "dropReply: true", "truncateReplyBytes: 100", "hang: true", "resetConnection: true",
            "closeConnection: true", "topologyVersion: 'omit'"})
    void isTheWholeReplySoNothingElseMayDecideIt(String other) {
        RuleException e = refused("{failCommands: ['insert'], cannedReply: {ok: 1}, " + other + "}");
        assertEquals("data.cannedReply", e.field());
        String field = other.substring(0, other.indexOf(':'));
        assertTrue(e.getMessage().contains("not with " + field), e.getMessage());
    }

    @Test
    void aFlagThatIsOffSaysNothingAndIsAccepted() {
        Rule rule = parse("{failCommands: ['find'], cannedReply: {ok: 1}, hang: false, dropReply: false}");
        assertEquals("cannedReply", rule.action().name());
    }

    @Test
    void helloIsNotAnsweredFromARule() {
        for (String name : new String[] {"hello", "isMaster", "ismaster"}) {
            RuleException e = refused("{failCommands: ['" + name + "'], cannedReply: {ok: 1, isWritablePrimary: true}}");
            assertEquals("data.cannedReply", e.field());
            assertTrue(e.getMessage().contains("hello and isMaster can be failed with"), e.getMessage());
        }
        Rule all = parse("{failAllCommands: true, cannedReply: {ok: 1}}");
        assertEquals(Set.of("hello", "isMaster", "ismaster"), all.matcher().allBut(), "every command but the hellos");
    }

    @Test
    void aScenarioCarriesTheReplyAsWrittenAndOneWithoutOkIsRejectedWithItsLine() {
        ScenarioLoader loader = new ScenarioLoader(new RuleParser(1), member -> true);
        String yaml = """
                name: canned
                rules:
                  - id: dup
                    configureFailPoint: failCommand
                    mode: {times: 1}
                    data:
                      failCommands: [insert]
                      cannedReply: {ok: 1, n: 0, writeErrors: [{index: 0, code: 11000, errmsg: "E11000 duplicate key"}]}
                """;
        Scenario scenario = loader.parse("canned.yaml", yaml);
        FakeInterception command = FakeInterception.retryableInsert();
        scenario.rules().get(0).action().apply(command);
        assertEquals(BsonDocument.parse(DUPLICATE_KEY), command.answered);

        ScenarioException e = assertThrows(ScenarioException.class,
                () -> loader.parse("canned.yaml", yaml.replace("{ok: 1, n: 0,", "{n: 0,")));
        assertTrue(e.getMessage().startsWith("canned.yaml:8: rules[0].data.cannedReply.ok: required, a number"), e.getMessage());
    }
}
