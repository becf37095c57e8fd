package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.WireSocket;
import java.io.EOFException;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An exhaust getMore (the flag drivers such as PyMongo and the C driver set for exhaust cursors; the
 * sync Java driver never does) is answered by a stream of moreToCome replies. A reply fate on its
 * first reply that ends the connection must end the attempt once: one outcome, one history line.
 */
class StreamedReplyCountsTest {
    private static final Duration WAIT = Duration.ofSeconds(15);

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"dropReply: true", "truncateReplyBytes: 40", "delayReplyMS: 2000", "trickleReplyBytes: 8, trickleReplyIntervalMS: 2000"})
    void anExhaustGetMoreWhoseStreamIsCutEndsOnce(String fate) throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(scripted.uri("replicaSet=" + ScriptedMongod.SET_NAME)))) {
            int port = proxy.members().get(0).advertised().port();
            scripted.insertDocuments("test", "ex", IntStream.range(0, 20).mapToObj(i -> new BsonDocument("_id", new BsonInt32(i))).toList());
            try (WireSocket raw = new WireSocket(port, 100, (int) WAIT.toMillis())) {
                raw.sendMsg(0, new BsonDocument("find", new BsonString("ex")).append("batchSize", new BsonInt32(2))
                        .append("$db", new BsonString("test")));
                long cursorId = ScriptedMongodWire.parseOpMsg(raw.read()).body().getDocument("cursor").getInt64("id").getValue();
                proxy.rules().put(proxy.ruleParser().parse("cut", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                        + " mode: {times: 1}, data: {failCommands: ['getMore'], " + fate + "}}")));
                raw.sendMsg(ScriptedMongodWire.FLAG_EXHAUST_ALLOWED,
                        new BsonDocument("getMore", new BsonInt64(cursorId)).append("collection", new BsonString("ex"))
                                .append("batchSize", new BsonInt32(2)).append("$db", new BsonString("test")));
                if (fate.startsWith("dropReply")) {
                    raw.expectClosed();
                } else if (fate.startsWith("truncateReplyBytes")) { // the first reply's first 40 bytes, then the end: nothing follows
                    assertThrows(EOFException.class, raw::read);
                } else {
                    Thread.sleep(300); // the first reply is held (or its first piece sent); the client gives up meanwhile
                }
            }
            Await.until(WAIT, () -> "the getMore's outcome", () -> Meters.sum(proxy.registry(), "blackpipe.command.outcomes", "command", "getMore") > 0);
            Thread.sleep(300); // room for a second ending, if there is one
            assertEquals(1, Meters.attempts(proxy.registry(), "getMore"));
            assertEquals(1L, (long) Meters.sum(proxy.registry(), "blackpipe.command.outcomes", "command", "getMore"),
                    "one attempt, one outcome");
            assertEquals(1, Meters.outcomes(proxy.registry(), "getMore", "network_error"));
            List<HistoryEntry> getMores = proxy.history().recent().stream().filter(e -> e.command().equals("getMore")).toList();
            assertEquals(1, getMores.size(), "one history line: " + getMores);
        }
    }
}
