package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A request with moreToCome (an unacknowledged w:0 write) is never answered, by the server or by
 * a fault standing in for it: an unsolicited reply would be read as the answer to the client's
 * next command on the connection.
 */
class MoreToComeFaultTest {
    private static final int MORE_TO_COME = 2;
    private ProxyServer proxy;
    private Socket socket;
    private String db;

    @BeforeEach
    void start() throws IOException {
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
        db = UpstreamLane.freshDatabaseName("moretocome");
        Member member = proxy.members().get(0);
        socket = new Socket();
        socket.connect(new InetSocketAddress(member.advertised().host(), member.advertised().port()), 5000);
        socket.setSoTimeout(5000);
    }

    @AfterEach
    void stop() throws IOException {
        socket.close();
        proxy.close();
    }

    private static byte[] opMsg(int requestId, int flags, BsonDocument body) {
        BasicOutputBuffer bson = new BasicOutputBuffer();
        new BsonDocumentCodec().encode(new BsonBinaryWriter(bson), body, EncoderContext.builder().build());
        byte[] document = bson.toByteArray();
        ByteBuffer message = ByteBuffer.allocate(16 + 4 + 1 + document.length).order(ByteOrder.LITTLE_ENDIAN);
        message.putInt(message.capacity()).putInt(requestId).putInt(0).putInt(2013).putInt(flags).put((byte) 0).put(document);
        return message.array();
    }

    private void send(byte[] message) throws IOException {
        socket.getOutputStream().write(message);
        socket.getOutputStream().flush();
    }

    /** The next reply on the connection: its responseTo and body. */
    private Object[] readReply() throws IOException {
        DataInputStream in = new DataInputStream(socket.getInputStream());
        byte[] header = new byte[16];
        in.readFully(header);
        ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
        int length = h.getInt(0);
        byte[] rest = new byte[length - 16];
        in.readFully(rest);
        byte[] bson = Arrays.copyOfRange(rest, 5, rest.length);
        return new Object[] {h.getInt(8), new RawBsonDocument(bson)};
    }

    private BsonDocument insert(int id) {
        return BsonDocument.parse("{insert: 'c', documents: [{_id: " + id + "}], writeConcern: {w: 0}, $db: '" + db + "'}");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"errorCode: 13", "errorCode: 91", "blockConnection: true, blockTimeMS: 100, errorCode: 13", "hang: true"})
    void aSynthesizedAnswerToAnUnacknowledgedWriteIsNotSentAndTheConnectionStaysInStep(String data) throws IOException {
        // (forwarded faults are not exercised here: jongodb itself answers w:0 writes, which a real server never does)
        proxy.rules().put(proxy.ruleParser().parse("w0", BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], " + data + "}}")));
        send(opMsg(1, MORE_TO_COME, insert(1)));
        send(opMsg(2, 0, BsonDocument.parse("{ping: 1, $db: 'admin'}")));
        Object[] reply = readReply();
        assertEquals(2, reply[0], "the first reply on the connection must answer the ping, not the w:0 insert: " + reply[1]);
        assertEquals(1.0, ((BsonDocument) reply[1]).getNumber("ok").doubleValue());
        assertEquals(1, Meters.faults(proxy.registry(), data.startsWith("hang") ? "hang" : "errorReply", "insert"));
        assertEquals(1, Meters.attempts(proxy.registry(), "insert"));
        // closed, not left open for the next request to overwrite: an answered error did not happen (error),
        // a hung write is one nobody can know about (no_reply)
        String outcome = data.startsWith("hang") ? "no_reply" : "error";
        assertEquals(1, Meters.outcomes(proxy.registry(), "insert", outcome), "the w:0 attempt's outcome");
    }

    /**
     * A w:0 write that its connection's end cut while it was held (a rule's block, a blackhole) is one nobody can know
     * about, as one cut on its way in: no_reply. It was counted a network error, which no client of a w:0 write sees.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"blocked, then its connection reset", "held in a blackhole, then its client left"})
    void anUnacknowledgedWriteHeldWhenItsConnectionEndsHasNoReply(String held) throws Exception {
        String member = proxy.members().get(0).upstream().toString();
        if (held.startsWith("blocked")) {
            proxy.rules().put(proxy.ruleParser().parse("w0", BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
                    + " data: {failCommands: ['insert'], blockConnection: true, blockTimeMS: 1500}}")));
        } else {
            proxy.blackhole(member, 0);
        }
        send(opMsg(1, MORE_TO_COME, insert(1)));
        Await.until(Duration.ofSeconds(5), "the insert to arrive", () -> Meters.attempts(proxy.registry(), "insert") == 1);
        if (held.startsWith("blocked")) {
            assertEquals(1, proxy.resetConnections(member));
        } else {
            socket.close();
        }
        Await.until(Duration.ofSeconds(5), () -> "the insert's end: " + Meters.outcomes(proxy.registry(), "insert", "network_error")
                + " network errors", () -> Meters.outcomes(proxy.registry(), "insert", "no_reply") == 1);
        assertEquals(0, Meters.outcomes(proxy.registry(), "insert", "network_error"));
        if (held.startsWith("blocked")) { // as failCommand's block, the command goes on once its block ends, client or none
            try (MongoClient direct = MongoClients.create(UpstreamLane.uri())) {
                Await.until(Duration.ofSeconds(5), "the blocked write at the member",
                        () -> direct.getDatabase(db).getCollection("c").countDocuments() == 1);
            }
        }
    }

    /** A configureFailPoint sent with moreToCome takes effect unanswered: a reply would answer the next request's place. */
    @org.junit.jupiter.api.Test
    void aFailPointCommandSentWithMoreToComeTakesEffectWithoutAReply() throws IOException {
        send(opMsg(1, MORE_TO_COME, BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['ping'], errorCode: 13}, $db: 'admin'}")));
        send(opMsg(2, 0, BsonDocument.parse("{ping: 1, $db: 'admin'}")));
        Object[] reply = readReply();
        assertEquals(2, reply[0], "the first reply answers the ping, not the configureFailPoint: " + reply[1]);
        assertEquals(13, ((BsonDocument) reply[1]).getNumber("code").intValue(), "the rule took effect: " + reply[1]);
        assertEquals(1, proxy.rules().fired("failCommand@" + proxy.members().get(0).advertised()));
    }

    /** mongod closes the connection of a w:0 write refused as not primary, so that the client selects a server again (OP_MSG spec). */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"error: 'NotWritablePrimary'", "errorCode: 10107, errorLabels: []", "errorCode: 13435", "errorCode: 189",
            "errorCode: 11602", "blockConnection: true, blockTimeMS: 100, errorCode: 10107"})
    void aNotPrimaryErrorOnAnUnacknowledgedWriteClosesTheConnectionWithoutAReply(String data) throws IOException {
        proxy.rules().put(proxy.ruleParser().parse("w0", BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], " + data + "}}")));
        send(opMsg(1, MORE_TO_COME, insert(1)));
        send(opMsg(2, 0, BsonDocument.parse("{ping: 1, $db: 'admin'}")));
        assertEquals(-1, socket.getInputStream().read(), "closed, with no reply to the insert nor to the ping");
        assertEquals(1, Meters.faults(proxy.registry(), "errorReply", "insert"));
        assertEquals(1, Meters.attempts(proxy.registry(), "insert"));
        assertEquals(1, Meters.outcomes(proxy.registry(), "insert", "error"));
    }

    /**
     * As a server that ended the session: what the client sent behind the refused write is never
     * read. It was sent, so it counts as an attempt cut by the close; no rule spends itself on it.
     */
    @org.junit.jupiter.api.Test
    void aRequestReadBehindTheRefusedWriteIsCutByTheClose() throws IOException, InterruptedException {
        proxy.rules().put(proxy.ruleParser().parse("w0", BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], error: 'NotWritablePrimary'}}")));
        proxy.rules().put(proxy.ruleParser().parse("find", BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['find'], errorCode: 13}}")));
        byte[] refused = opMsg(1, MORE_TO_COME, insert(1));
        byte[] behind = opMsg(2, 0, BsonDocument.parse("{find: 'c', $db: '" + db + "'}"));
        byte[] both = Arrays.copyOf(refused, refused.length + behind.length);
        System.arraycopy(behind, 0, both, refused.length, behind.length);
        send(both); // one write: the proxy reads both requests together
        assertEquals(-1, socket.getInputStream().read(), "closed, with no reply");
        // the close goes out as the refused write is answered; the find behind it is counted just after
        Await.until(Duration.ofSeconds(5), () -> "the find to be counted, cut by the close",
                () -> Meters.outcomes(proxy.registry(), "find", "network_error") == 1);
        assertEquals(1, Meters.attempts(proxy.registry(), "find"));
        assertEquals(0, Meters.faults(proxy.registry(), "errorReply", "find"), "the find's rule was not spent on it");
    }
}
