package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.action.BlockConnection;
import io.blackpipe.fault.action.TruncateReply;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * truncateReplyBytes as a rule field: what it must be, where it stands among the other fields that decide a
 * command's fate, and every refusal, each naming the field.
 */
class TruncateReplyRuleTest {
    private final RuleParser parser = new RuleParser(1234);

    private Rule parseData(String data) {
        return parser.parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: " + data + "}"));
    }

    private RuleException refused(String data) {
        return assertThrows(RuleException.class, () -> parseData(data), data);
    }

    @Test
    void aWholeNumberFromOneIsATruncatedReply() {
        assertInstanceOf(TruncateReply.class, parseData("{failCommands: ['find'], truncateReplyBytes: 100}").action());
        assertInstanceOf(TruncateReply.class, parseData("{failCommands: ['find'], truncateReplyBytes: 1}").action());
        assertInstanceOf(TruncateReply.class, parseData("{failCommands: ['find'], truncateReplyBytes: 3.0}").action());
        assertInstanceOf(TruncateReply.class, parseData("{failCommands: ['find'], truncateReplyBytes: {$numberLong: '9000000000'}}").action());
        assertEquals("truncateReply", parseData("{failCommands: ['insert'], truncateReplyBytes: 16}").action().name());
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-1", "'100'", "6.5", "true", "null", "{n: 1}"})
    void anythingElseIsRefusedNamingTheField(String value) {
        RuleException e = refused("{failCommands: ['find'], truncateReplyBytes: " + value + "}");
        assertTrue(e.getMessage().startsWith("data.truncateReplyBytes: must be a whole number of at least 1, got "), e.getMessage());
        assertEquals("data.truncateReplyBytes", e.field());
    }

    @ParameterizedTest(name = "{0} wins")
    @CsvSource(delimiter = '|', value = {
        "hang            | hang: true, truncateReplyBytes: 100",
        "resetConnection | resetConnection: true, truncateReplyBytes: 100",
        "closeConnection | closeConnection: true, truncateReplyBytes: 100",
        "truncateReply   | truncateReplyBytes: 100, error: 'NotWritablePrimary'",
        "truncateReply   | truncateReplyBytes: 100, writeConcernError: {code: 64}",
        "truncateReply   | truncateReplyBytes: 100, dropReply: false",
    })
    void itStandsWithDropReplyBelowTheConnectionFaultsAndAboveTheErrors(String winner, String fields) {
        assertEquals(winner, parseData("{failCommands: ['insert'], " + fields + "}").action().name());
    }

    @ParameterizedTest(name = "{1}")
    @CsvSource(delimiter = '|', value = {
        "dropReply                                   | dropReply: true",
        "delayReplyMS                                | delayReplyMS: 100",
        "delayReplyMS                                | delayReplyMS: 100, delayReplyJitterMS: 20",
        "trickleReplyBytes + trickleReplyIntervalMS  | trickleReplyBytes: 64, trickleReplyIntervalMS: 10",
    })
    void anotherFateOfTheReplyIsRefusedNamingBoth(String other, String fields) {
        for (String data : List.of("{failCommands: ['insert'], truncateReplyBytes: 100, " + fields + "}",
                "{failCommands: ['insert'], " + fields + ", truncateReplyBytes: 100}")) {
            RuleException e = refused(data);
            assertEquals("data.truncateReplyBytes", e.field(), e.getMessage());
            assertEquals("data.truncateReplyBytes: give " + other + " or truncateReplyBytes, not both: each decides how the reply"
                    + " reaches the client (truncateReplyBytes: its first bytes, then the connection closes)", e.getMessage());
        }
    }

    @Test
    void aCannedReplyIsRefusedWithItNamingBoth() {
        RuleException e = refused("{failCommands: ['insert'], cannedReply: {ok: 1}, truncateReplyBytes: 100}");
        assertEquals("data.cannedReply", e.field());
        assertTrue(e.getMessage().contains("not with truncateReplyBytes"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"hello", "isMaster", "ismaster"})
    void helloIsRefusedAsForEveryFateOfItsReply(String hello) {
        RuleException e = refused("{failCommands: ['" + hello + "'], truncateReplyBytes: 100}");
        assertEquals("data.truncateReplyBytes", e.field());
        assertTrue(e.getMessage().contains("hello and isMaster can be failed with errorCode, closeConnection, resetConnection,"
                + " blockConnection or hang"), e.getMessage());
        refused("{failCommands: ['find', '" + hello + "'], truncateReplyBytes: 100}");
    }

    @Test
    void onAllCommandsItLeavesTheHellosAloneAndAfterABlockItCutsTheReplyOfTheForwardedCommand() {
        Matcher all = parseData("{failAllCommands: true, truncateReplyBytes: 100}").matcher();
        assertEquals(Set.of("hello", "isMaster", "ismaster"), all.allBut());

        Rule blocked = parseData("{failCommands: ['insert'], blockConnection: true, blockTimeMS: 50, truncateReplyBytes: 100}");
        assertEquals("truncateReply", blocked.action().name(), "counted as what broke the command");
        FakeInterception command = FakeInterception.retryableInsert();
        assertInstanceOf(BlockConnection.class, blocked.action()).apply(command);
        assertEquals(List.of(50L), command.waits);
        command.elapse();
        assertEquals(List.of("forward(fate)"), command.calls, "blocked, then forwarded");
        FakeInterception.FakeReply reply = new FakeInterception.FakeReply(BsonDocument.parse("{ok: 1.0}"));
        command.fate.decide(reply);
        assertEquals(List.of("truncateAndClose"), reply.calls);
        assertEquals(100, reply.truncatedAt);
    }
}
