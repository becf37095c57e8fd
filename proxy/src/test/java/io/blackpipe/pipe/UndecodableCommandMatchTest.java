package io.blackpipe.pipe;

import static io.blackpipe.wire.WireFixtures.document;
import static io.blackpipe.wire.WireFixtures.element;
import static io.blackpipe.wire.WireFixtures.le32;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
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
    /** Apart from the ids the proxy's own probes use, so that the member's record shows whether this one came. */
    private static final int INSERT_REQUEST_ID = 5_555_555;

    /** An insert whose document is {_id: 1, x: <type 0x20, which BSON does not have>}. */
    private static byte[] undecodableInsert() {
        byte[] badDocument = document(element(0x10, "_id", le32(1)), element(0x20, "x", le32(7)));
        return opMsg(INSERT_REQUEST_ID, 0, 0).body("{insert: 'c', $db: 'test'}").sequence("documents", badDocument).build();
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
                        BsonDocument reply = ScriptedMongodWire.parseOpMsg(client.readFrame()).body();
                        seen = "the member's answer: " + reply.get("code") + " " + reply.get("codeName");
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
                assertEquals(1, member.framesReceived(f -> f.requestId() == INSERT_REQUEST_ID).size(), "the member met the insert");
                return seen;
            } finally {
                proxy.close();
            }
        }
    }

    @Test
    void aRuleLookingIntoInsertsLetsAnInsertItCannotDecodeGoOnAsWithoutIt() throws Exception {
        String withoutRule = sendThrough(false);
        assertEquals("the member's answer: BsonInt32{value=22} BsonString{value='InvalidBSON'}", withoutRule,
                "what mongod answers a document it cannot read");
        assertEquals(withoutRule, sendThrough(true));
    }
}
