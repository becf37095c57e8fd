package io.blackpipe.pipe;

import static io.blackpipe.wire.WireFixtures.concat;
import static io.blackpipe.wire.WireFixtures.le32;
import static io.blackpipe.wire.WireFixtures.readLe32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.NettyLeakCheck;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.wire.BsonIo;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A request whose document nests deeper than the proxy's stack can decode (the proxy decodes a hello that asks for
 * compression, to take that out) is a malformed message: it closes its own connection with a log line, its buffer
 * is released, and the member's other connections go on; the same when it waited in a blackhole or behind a block
 * first, and ran only then, outside the pipeline.
 */
class NestedTooDeepTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    /** Far deeper than any stack decodes: mongod refuses documents past 200 levels anyway. */
    private static final int DEPTH = 100_000;
    /** Apart from the ids the proxy's own probes use, so that the member's record shows whether this one came. */
    private static final int NESTED_REQUEST_ID = 7_777_777;
    private LogCapture log;
    private ScriptedMongod upstream;
    private ProxyServer proxy;

    @BeforeEach
    void start() throws Exception {
        log = LogCapture.start();
        upstream = ScriptedMongod.start();
        proxy = ScriptedProxy.start(upstream);
    }

    @AfterEach
    void stop() {
        proxy.close();
        upstream.close();
        log.close();
    }

    @Test
    void aHelloNestedTooDeepClosesOnlyItsConnection() throws Exception {
        closesItsConnection(() -> { });
    }

    @Test
    void aHelloNestedTooDeepThatWaitedInABlackholeClosesItsConnectionWhenItEnds() throws Exception {
        proxy.blackhole("all", 0);
        closesItsConnection(() -> {
            sleep(200);
            proxy.restore("all");
        });
    }

    @Test
    void aHelloNestedTooDeepHeldByABlockClosesItsConnectionWhenTheBlockEnds() throws Exception {
        proxy.rules().put(proxy.ruleParser().parse("block", BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['hello'], blockConnection: true, blockTimeMS: 300}}")));
        closesItsConnection(() -> { });
    }

    private void closesItsConnection(Runnable afterSending) throws Exception {
        try (RawClient client = RawClient.connect(ScriptedProxy.member(proxy).advertised())) {
            client.send(helloNestedTooDeep(NESTED_REQUEST_ID));
            afterSending.run();
            byte[] received = client.awaitClosedByPeer(WAIT);
            assertEquals(0, received.length, "no reply to the hello");
            String line = log.awaitContaining(WAIT, client.logName(), "nested too deep");
            assertTrue(line.contains("malformed"), line);
        }
        assertEquals(List.of(), NettyLeakCheck.detectLeaks(), "the request's buffer is released");
        assertEquals(List.of(), upstream.framesReceived(f -> f.requestId() == NESTED_REQUEST_ID), "it never reached the member");
        try (RawClient other = RawClient.connect(ScriptedProxy.member(proxy).advertised())) {
            byte[] reply = other.roundTrip(opMsg(8, BsonIo.encode(BsonDocument.parse("{hello: 1, $db: 'admin'}"))));
            assertEquals(8, readLe32(reply, 8), "the member's next connection is answered");
        }
    }

    /** {hello: 1, compression: ['zlib'], $db: 'admin', x: {a: {a: ... {}}}}, DEPTH levels deep, built flat. */
    private static byte[] helloNestedTooDeep(int requestId) {
        byte[] head = BsonIo.encode(BsonDocument.parse("{hello: 1, compression: ['zlib'], $db: 'admin'}"));
        ByteArrayOutputStream nested = new ByteArrayOutputStream(DEPTH * 8 + 5);
        for (int level = 0; level < DEPTH; level++) { // each level: its length, then the element 'a', a document
            nested.writeBytes(le32(5 + 8 * (DEPTH - level)));
            nested.writeBytes(new byte[] {0x03, 'a', 0});
        }
        nested.writeBytes(new byte[] {5, 0, 0, 0, 0});
        byte[] closing = new byte[DEPTH];
        nested.writeBytes(closing);
        byte[] x = concat(new byte[] {0x03, 'x', 0}, nested.toByteArray());
        byte[] elements = Arrays.copyOfRange(head, 4, head.length - 1);
        byte[] body = concat(le32(4 + elements.length + x.length + 1), elements, x, new byte[] {0});
        return opMsg(requestId, body);
    }

    private static byte[] opMsg(int requestId, byte[] body) {
        ByteBuffer frame = ByteBuffer.allocate(16 + 4 + 1 + body.length).order(ByteOrder.LITTLE_ENDIAN);
        frame.putInt(frame.capacity()).putInt(requestId).putInt(0).putInt(2013).putInt(0).put((byte) 0).put(body);
        return frame.array();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
