package io.blackpipe.pipe;

import static io.blackpipe.wire.WireFixtures.document;
import static io.blackpipe.wire.WireFixtures.element;
import static io.blackpipe.wire.WireFixtures.le32;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * The proxy forwards a request whose BSON it cannot decode (its lengths right, an element of no BSON
 * type) and lets the member judge it; a rule looking into inserts (commandMatches) must not change
 * that: the request matches no pattern and goes on, counted to its end, as without the rule.
 */
class UndecodableCommandMatchTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** An insert whose document is {_id: 1, x: <type 0x20, which BSON does not have>}. */
    private static byte[] undecodableInsert() {
        byte[] badDocument = document(element(0x10, "_id", le32(1)), element(0x20, "x", le32(7)));
        return opMsg(1, 0, 0).body("{insert: 'c', $db: 'test'}").sequence("documents", badDocument).build();
    }

    /** What became of the insert: the member's answer (or its close) as the client saw it, and the proxy's counts. */
    private static String sendThrough(boolean withRule) throws Exception {
        try (LogCapture log = LogCapture.start(); ScriptedMongod member = ScriptedMongod.start()) {
            ProxyServer proxy = ScriptedProxy.start(member);
            try {
                if (withRule) {
                    proxy.rules().put(proxy.ruleParser().parse("sku", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                            + " mode: 'alwaysOn', data: {failCommands: ['insert'], errorCode: 2, commandMatches: {'documents.sku': 'B2'}}}")));
                }
                String seen;
                try (RawClient client = RawClient.connect(ScriptedProxy.member(proxy).advertised())) {
                    client.send(undecodableInsert());
                    try {
                        seen = "a reply of " + client.readFrame().length + " bytes";
                    } catch (IOException closed) {
                        seen = "the connection closed";
                    }
                }
                Await.until(TIMEOUT, "the insert's outcome", () -> Meters.sum(proxy.registry(), "blackpipe.command.outcomes",
                        "command", "insert") == 1);
                assertEquals(1, Meters.attempts(proxy.registry(), "insert"));
                assertEquals(List.of(), log.messages().stream().filter(line -> line.contains("invalid BSON")).toList(),
                        "the proxy read nothing wrong: it forwarded what it could not decode");
                assertEquals(0, proxy.rules().fired("sku"));
                Await.until(TIMEOUT, "the member to meet the insert", () -> !member.errors().isEmpty());
                return seen + ", the member could not read it: " + member.errors().get(0).getMessage().replaceAll("connection [0-9]+", "");
            } finally {
                proxy.close();
            }
        }
    }

    @Test
    void aRuleLookingIntoInsertsLetsAnInsertItCannotDecodeGoOnAsWithoutIt() throws Exception {
        String withoutRule = sendThrough(false);
        assertTrue(withoutRule.startsWith("the connection closed, the member could not read it"), withoutRule);
        assertEquals(withoutRule, sendThrough(true));
    }
}
