package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.topology.Member;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * truncateReplyBytes, proven with the real Java driver through the proxy (and, for the bytes themselves, a bare
 * socket): the command runs on the member, the client gets the first bytes of its reply and then end of stream,
 * as after Toxiproxy's limit_data. The driver reads "Prematurely reached end of stream" for a write that happened.
 */
class TruncateReplyDriverTest extends DriverRigTest {
    private static final int HEADER = 16;

    /** How a bare client's read of a reply ended: the reply whole, or the connection closed (FIN) or reset (RST) first. */
    private enum End { WHOLE, FIN, RST }

    /** What a bare client read of the one reply to its request, and how that ended. */
    private record Read(byte[] bytes, End end) {
        int messageLength() {
            return ScriptedMongodWire.intLE(bytes, 0);
        }
    }

    /** Sends {@code command} alone on a new connection to the proxy and reads its reply, whole or until the proxy closes. */
    private Read sendAlone(BsonDocument command) throws IOException {
        Member member = rig.proxy.members().get(0);
        try (Socket socket = new Socket(member.advertised().host(), member.advertised().port())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(ScriptedMongodWire.buildOpMsg(7, 0, 0, command, null));
            socket.getOutputStream().flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream read = new ByteArrayOutputStream();
            byte[] buffer = new byte[4096];
            try {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    read.write(buffer, 0, n);
                    byte[] sofar = read.toByteArray();
                    if (sofar.length >= 4 && sofar.length == ScriptedMongodWire.intLE(sofar, 0)) {
                        return new Read(sofar, End.WHOLE); // the connection stays open
                    }
                }
            } catch (SocketException reset) {
                return new Read(read.toByteArray(), End.RST);
            }
            return new Read(read.toByteArray(), End.FIN);
        }
    }

    private BsonDocument find() {
        return BsonDocument.parse("{find: 'c', sort: {_id: 1}, $db: '" + rig.db + "'}");
    }

    /** 24 documents of some 330 bytes each: a find's reply of several KB. */
    private List<Document> manyDocuments() {
        List<Document> documents = new ArrayList<>();
        IntStream.range(0, 24).forEach(i -> documents.add(new Document("_id", i).append("text", "x".repeat(300))));
        rig.serverSide("c").insertMany(documents);
        return documents;
    }

    private HistoryEntry historyOf(String command) throws InterruptedException {
        Await.until(Duration.ofSeconds(10), "a history line for " + command,
                () -> rig.proxy.history().recent().stream().anyMatch(e -> e.command().equals(command)));
        List<HistoryEntry> entries = rig.proxy.history().recent().stream().filter(e -> e.command().equals(command)).toList();
        return entries.get(0);
    }

    private static void assertEndOfStream(MongoSocketReadException e) {
        assertEquals(MongoSocketReadException.class, e.getClass(), "a read that met the end of the stream, no timeout: " + e);
        assertEquals("Prematurely reached end of stream", e.getMessage(), "a FIN, as the Java driver 5.14 reads it");
    }

    @Test
    void aCutInsertWithoutRetriesIsAReadErrorForAWriteThatHappened() throws InterruptedException {
        rig.rule("{times: 1}", "insert", "truncateReplyBytes: 20");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false"));

        assertEndOfStream(assertThrows(MongoSocketReadException.class, () -> c.insertOne(new Document("_id", 1))));
        assertEquals(List.of(new Document("_id", 1)), rig.serverSide("c").find().into(new ArrayList<>()),
                "the member applied the insert: read past the proxy");
        rig.assertAttempts("insert", 1, 0);
        rig.awaitOutcome("insert", "network_error", 1);
        assertEquals(1, rig.faults("truncateReply", "insert"));
        assertEquals(1, rig.allFaults(), "no hello or other command was cut");
        assertEquals(1, rig.proxy.rules().fired("r0"));
        HistoryEntry entry = historyOf("insert");
        assertEquals("truncateReply", entry.fault());
        assertEquals("network_error", entry.outcome());
        assertEquals("info", entry.type(), "it may have happened (it did)");
        assertEquals(1, entry.attempt());

        c.insertOne(new Document("_id", 2)); // the rule is spent
        assertEquals(2, rig.serverCount());
        assertEquals(1, rig.outcomes("insert", "ok"));
    }

    /**
     * The driver retries a retryable write after a network error, with the same lsid and txnNumber. mongod answers
     * the retry with the first insert's result, and so does blackpipe in the place of a member that would run it
     * again (jongodb, which would answer a duplicate key of the driver's own write).
     */
    @Test
    void aCutRetryableInsertIsRetriedOnceAndTheDocumentIsStoredOnce() throws InterruptedException {
        rig.rule("{times: 1}", "insert", "truncateReplyBytes: 20");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));

        c.insertOne(new Document("_id", 1));
        rig.awaitOutcome("insert", "ok", 1);
        rig.assertAttempts("insert", 2, 1);
        rig.awaitOutcome("insert", "network_error", 1);
        assertEquals(1, rig.faults("truncateReply", "insert"), "the retry passed: the rule was spent");
        assertEquals(List.of(new Document("_id", 1)), rig.serverSide("c").find().into(new ArrayList<>()));
    }

    @Test
    void aLargeFindIsCutAtItsFirstHundredBytesAndThenTheConnectionCloses() throws IOException, InterruptedException {
        manyDocuments();
        rig.rule("{times: 1}", "find", "truncateReplyBytes: 100");
        Read cut = sendAlone(find());
        Read whole = sendAlone(find()); // the rule is spent: the member's reply to the same find, whole

        assertEquals(End.WHOLE, whole.end());
        assertTrue(whole.messageLength() > 24 * 300, "a reply of several KB: " + whole.messageLength());
        assertEquals(100, cut.bytes().length, "exactly the first 100 bytes");
        assertEquals(End.FIN, cut.end(), "then a FIN, not a reset");
        assertEquals(whole.messageLength(), cut.messageLength(), "the header announces the whole reply");
        assertEquals(7, ScriptedMongodWire.responseTo(cut.bytes()));
        assertArrayEquals(Arrays.copyOfRange(whole.bytes(), HEADER, 100), Arrays.copyOfRange(cut.bytes(), HEADER, 100),
                "the member's own bytes, as far as they go");
        assertEquals(1, rig.faults("truncateReply", "find"));
        rig.awaitOutcome("find", "network_error", 1);
        rig.awaitOutcome("find", "ok", 1);
    }

    @Test
    void aCutFindFailsWithoutRetriesAndIsRetriedWholeWithThem() throws InterruptedException {
        List<Document> documents = manyDocuments();
        rig.rule("{times: 1}", "find", "truncateReplyBytes: 100");
        MongoCollection<Document> once = rig.collection(rig.client("retryReads=false"));
        assertEndOfStream(assertThrows(MongoSocketReadException.class, () -> once.find().sort(new Document("_id", 1)).first()));
        rig.assertAttempts("find", 1, 0);

        rig.rule("{times: 1}", "find", "truncateReplyBytes: 100");
        MongoCollection<Document> retrying = rig.collection(rig.client("retryReads=true"));
        assertEquals(documents, retrying.find().sort(new Document("_id", 1)).into(new ArrayList<>()), "the retry's reply, whole");
        rig.assertAttempts("find", 3, 1);
        rig.awaitOutcome("find", "network_error", 2);
        rig.awaitOutcome("find", "ok", 1);
        assertEquals(2, rig.faults("truncateReply", "find"));
    }

    /** A reply no longer than the bytes given loses its last byte: a whole reply would be a success, and the rule promises a cut. */
    @Test
    void aReplyShorterThanTheBytesGivenLosesItsLastByte() throws IOException, InterruptedException {
        rig.rule("{times: 2}", "insert", "truncateReplyBytes: 1000000");
        Read cut = sendAlone(BsonDocument.parse("{insert: 'c', documents: [{_id: 1}], $db: '" + rig.db + "'}"));
        assertTrue(cut.messageLength() < 1000, "an insert's short reply: " + cut.messageLength() + " bytes");
        assertEquals(cut.messageLength() - 1, cut.bytes().length, "all but its last byte");
        assertEquals(End.FIN, cut.end());

        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false"));
        assertEndOfStream(assertThrows(MongoSocketReadException.class, () -> c.insertOne(new Document("_id", 2))));
        assertEquals(2, rig.serverCount(), "both inserts ran");
        rig.awaitOutcome("insert", "network_error", 2);
        assertEquals(2, rig.faults("truncateReply", "insert"));
    }

    @Test
    void configureFailPointThroughTheProxyTakesItAndARefusedOneLeavesTheRuleInForce() throws InterruptedException {
        MongoClient client = rig.client("retryWrites=false");
        client.getDatabase("admin").runCommand(Document.parse(
                "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], truncateReplyBytes: 30}}"));
        for (String data : List.of("truncateReplyBytes: 0", "truncateReplyBytes: 30, dropReply: true",
                "truncateReplyBytes: 30, delayReplyMS: 10", "truncateReplyBytes: 30, trickleReplyBytes: 8, trickleReplyIntervalMS: 5")) {
            MongoCommandException e = assertThrows(MongoCommandException.class, () -> client.getDatabase("admin").runCommand(
                    Document.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['insert'], " + data + "}}")));
            assertEquals(2, e.getErrorCode(), data);
            assertTrue(e.getErrorMessage().startsWith("data.truncateReplyBytes: "), e.getErrorMessage());
        }
        MongoCommandException hello = assertThrows(MongoCommandException.class, () -> client.getDatabase("admin").runCommand(
                Document.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['hello'], truncateReplyBytes: 5}}")));
        assertTrue(hello.getErrorMessage().startsWith("data.truncateReplyBytes: hello and isMaster can be failed with"),
                hello.getErrorMessage());
        assertEquals(1, rig.proxy.rules().rules().size(), "the rule in force stays");

        MongoCollection<Document> c = rig.collection(client);
        assertEndOfStream(assertThrows(MongoSocketReadException.class, () -> c.insertOne(new Document("_id", 1))));
        assertEquals(1, rig.serverCount());
        rig.awaitOutcome("insert", "network_error", 1);
        assertEquals(1, rig.faults("truncateReply", "insert"));
    }
}
