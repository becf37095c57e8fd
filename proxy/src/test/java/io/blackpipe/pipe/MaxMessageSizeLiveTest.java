package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.testing.RawUpstream;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.topology.MemberAddress;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** A message of exactly maxMessageSizeBytes (48,000,000) passes whole; one byte more is refused, as by mongod. */
class MaxMessageSizeLiveTest {

    @Test
    void aMessageOfExactlyMaxMessageSizeBytesPassesAndOneByteMoreCloses() throws Exception {
        AtomicInteger received = new AtomicInteger();
        try (RawUpstream upstream = new RawUpstream((socket, index) -> {
                 if (index == 0) {
                     RawUpstream.answerHellos(socket);
                     return;
                 }
                 InputStream in = socket.getInputStream();
                 OutputStream out = socket.getOutputStream();
                 byte[] request;
                 while ((request = RawUpstream.readFrame(in)) != null) {
                     if (ScriptedMongodWire.messageLength(request) > 1000) {
                         received.set(request.length);
                     }
                     out.write(ScriptedMongodWire.buildOpMsg(7, ScriptedMongodWire.requestId(request), 0,
                             RawUpstream.standaloneHello(), null));
                     out.flush();
                 }
             });
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + upstream.address() + "/?directConnection=true"))) {
            MemberAddress address = proxy.members().get(0).advertised();
            try (RawClient client = RawClient.connect(address)) {
                byte[] request = insert(1, 48_000_000);
                assertEquals(48_000_000, request.length);
                byte[] reply = client.roundTrip(request);
                assertEquals(1, ScriptedMongodWire.responseTo(reply));
                assertEquals(48_000_000, received.get());
            }
            try (RawClient client = RawClient.connect(address)) {
                try {
                    client.send(insert(2, 48_000_001));
                } catch (java.net.SocketException refusedAtTheHeader) {
                    return; // closed on reading the header, before the rest was written
                }
                client.awaitClosedByPeer(Duration.ofSeconds(10));
            }
        }
    }

    /** An insert of {@code size} bytes: a small body and one document sequence filled with binary. */
    private static byte[] insert(int requestId, int size) throws Exception {
        byte[] body = ScriptedMongodWire.encodeDocument(new BsonDocument("insert", new BsonString("c"))
                .append("$db", new BsonString("d")));
        byte[] id = "documents\0".getBytes(StandardCharsets.US_ASCII);
        int docOverhead = 4 + 1 + 2 + 4 + 1 + 1; // length, binary type, "b\0", binary length, subtype, terminator
        int docBytes = size - 16 - 4 - 1 - body.length - 1 - 4 - id.length;
        byte[] doc = ScriptedMongodWire.encodeDocument(new BsonDocument("b", new BsonBinary(new byte[docBytes - docOverhead])));
        assertEquals(docBytes, doc.length);
        ByteArrayOutputStream out = new ByteArrayOutputStream(size);
        out.write(le(size)); out.write(le(requestId)); out.write(le(0)); out.write(le(2013));
        out.write(le(0)); out.write(0); out.write(body);
        out.write(1); out.write(le(4 + id.length + doc.length)); out.write(id); out.write(doc);
        return out.toByteArray();
    }

    private static byte[] le(int v) {
        return new byte[] {(byte) v, (byte) (v >> 8), (byte) (v >> 16), (byte) (v >> 24)};
    }
}
