package io.blackpipe.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.blackpipe.testing.RawUpstream;
import io.blackpipe.testing.ScriptedMongodWire;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.SocketTimeoutException;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The proxy's own blocking client (its questions to members at start, its clean-ups) reads each reply as the answer to
 * the request it just sent. A member that answers a question after the client stopped waiting must not have that late
 * answer taken for the next one's.
 */
class BlockingCommandClientTest {

    @Test
    void aLateReplyToAnEarlierRequestIsPassedOver() throws Exception {
        try (RawUpstream member = new RawUpstream((socket, index) -> {
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            byte[] first = RawUpstream.readFrame(in);
            Thread.sleep(400); // past the client's wait for it
            out.write(reply(first, 1, "first"));
            byte[] second = RawUpstream.readFrame(in);
            out.write(reply(second, 2, "second"));
            out.flush();
            RawUpstream.readFrame(in);
        });
             BlockingCommandClient client = new BlockingCommandClient("127.0.0.1", member.port(), 5_000)) {
            client.readTimeout(100);
            SocketTimeoutException late = assertThrows(SocketTimeoutException.class,
                    () -> client.run("admin", new BsonDocument("ping", new BsonInt32(1))));
            assertEquals("no reply within 100 ms", late.getMessage());
            client.readTimeout(5_000);
            assertEquals("second", client.run("admin", new BsonDocument("ping", new BsonInt32(2))).getString("answer").getValue(),
                    "the second request's own answer");
        }
    }

    /** The wait ran out in the middle of the late reply: the next read goes on from the cut, not from a header there. */
    @ParameterizedTest(name = "cut after {0} bytes")
    @ValueSource(ints = {8, 20, 30})
    void aLateReplyCutByTheWaitIsReadToItsEndAndPassedOver(int cut) throws Exception {
        try (RawUpstream member = new RawUpstream((socket, index) -> {
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            byte[] late = reply(RawUpstream.readFrame(in), 1, "first");
            out.write(late, 0, cut);
            out.flush();
            byte[] second = RawUpstream.readFrame(in); // sent once the first wait ran out
            out.write(late, cut, late.length - cut);
            out.write(reply(second, 2, "second"));
            out.flush();
            RawUpstream.readFrame(in);
        });
             BlockingCommandClient client = new BlockingCommandClient("127.0.0.1", member.port(), 5_000)) {
            client.readTimeout(200);
            assertThrows(SocketTimeoutException.class, () -> client.run("admin", new BsonDocument("ping", new BsonInt32(1))));
            client.readTimeout(5_000);
            assertEquals("second", client.run("admin", new BsonDocument("ping", new BsonInt32(2))).getString("answer").getValue());
        }
    }

    @Test
    void aReplyToNoRequestOfItsOwnIsRefusedByName() throws Exception {
        try (RawUpstream member = new RawUpstream((socket, index) -> {
            InputStream in = socket.getInputStream();
            byte[] request = RawUpstream.readFrame(in);
            socket.getOutputStream().write(ScriptedMongodWire.buildOpMsg(1, ScriptedMongodWire.requestId(request) + 41, 0,
                    new BsonDocument("ok", new BsonInt32(1)), null));
            RawUpstream.readFrame(in);
        });
             BlockingCommandClient client = new BlockingCommandClient("127.0.0.1", member.port(), 5_000)) {
            IOException wrong = assertThrows(IOException.class, () -> client.run("admin", new BsonDocument("ping", new BsonInt32(1))));
            assertEquals("its reply answers request 42, not request 1", wrong.getMessage());
        }
    }

    private static byte[] reply(byte[] request, int replyId, String answer) {
        return ScriptedMongodWire.buildOpMsg(replyId, ScriptedMongodWire.requestId(request), 0,
                new BsonDocument("ok", new BsonInt32(1)).append("answer", new BsonString(answer)), null);
    }
}
