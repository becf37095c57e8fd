package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.NettyLeakCheck;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodFrame;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.WireSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A write whose document sequence holds a document that frames right but does not read (an unknown element type) is
 * the member's to judge, as it is without the proxy: mongod answers it with a parse error and keeps the connection.
 * The proxy reads an insert's documents only for a member that answers duplicate keys otherwise than mongod
 * (jongodb), and there too it forwards the write as it came; before, such a member's connection was closed, and
 * where the write was first copied as the member takes it (a read preference taken out), the request was released
 * twice and its copy leaked.
 */
class UnreadableSequenceTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int REQUEST_ID = 4_444_444;
    /** The element name whose type byte is made unknown; no other part of the request holds these bytes. */
    private static final String MARKED = "unreadableField";

    @ParameterizedTest(name = "{0} document(s), read preference {1}")
    @CsvSource({"1, primary", "1, secondaryPreferred", "2, primary", "2, secondaryPreferred"})
    void anInsertWithAnUnreadableDocumentIsTheMembersToJudge(int documents, String readPreference) throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().primaryReadsOnly().withoutEndSessions()
                .duplicateKeyAsCommandError().start();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member);
             WireSocket wire = ScriptedProxy.wire(proxy)) {
            log.await(m -> m.contains("answers a write's duplicate key as the command's error"), WAIT, "noting the member");
            wire.sendRaw(insertWithAnUnreadableDocument(documents, readPreference));

            byte[] reply = wire.read();
            assertEquals(REQUEST_ID, ScriptedMongodWire.responseTo(reply));
            BsonDocument error = ScriptedMongodWire.parseOpMsg(reply).body();
            assertEquals(22, error.getInt32("code").getValue(), error::toJson);
            assertEquals("InvalidBSON", error.getString("codeName").getValue(), "the member's own answer, as it came");

            List<ScriptedMongodFrame> received = member.framesReceived(f -> f.requestId() == REQUEST_ID);
            assertEquals(1, received.size(), "it reached the member");
            boolean preferenceSent = new String(received.get(0).raw(), StandardCharsets.ISO_8859_1).contains("$readPreference");
            assertEquals(readPreference.equals("primary"), preferenceSent, "primary passed as sent, any other taken out");
            assertEquals(List.of(), NettyLeakCheck.detectLeaks(), "the request, and any copy of it, released");
            assertTrue(log.messages().stream().noneMatch(m -> m.contains("malformed") || m.contains("IllegalReferenceCount")),
                    () -> String.join("\n", log.messages()));
            assertTrue(member.documents("shop", "orders").isEmpty(), "nothing inserted");

            int ping = wire.sendMsg(0, BsonDocument.parse("{ping: 1, $db: 'admin'}"));
            wire.readOk(ping); // the connection goes on, as the member kept it
        }
    }

    /** An insert of {@code documents} documents to shop.orders in a document sequence, the last of them unreadable. */
    private static byte[] insertWithAnUnreadableDocument(int documents, String readPreference) {
        BsonDocument body = BsonDocument.parse("{insert: 'orders', ordered: true, $db: 'shop', $readPreference: {mode: '"
                + readPreference + "'}}");
        List<BsonDocument> inserted = new ArrayList<>();
        for (int i = 1; i < documents; i++) {
            inserted.add(BsonDocument.parse("{_id: " + i + "}"));
        }
        inserted.add(BsonDocument.parse("{_id: " + documents + ", " + MARKED + ": 1}"));
        byte[] frame = ScriptedMongodWire.buildOpMsg(REQUEST_ID, 0, 0, body, Map.of("documents", inserted));
        int name = ScriptedMongodWire.indexOf(frame, MARKED.getBytes(StandardCharsets.UTF_8));
        frame[name - 1] = 0x42; // no BSON type: the document's length and terminator still frame it
        return frame;
    }
}
