package io.blackpipe.wire.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.wire.BlockingCommandClient;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** Negotiating the mechanism with a server that refuses the hello itself (the conversations are ScriptedScramServerTest's). */
class AuthenticatorTest {
    /**
     * A driver's handshake fails when hello does; before, any error but CommandNotFound was read as "no mechanisms
     * listed", SCRAM-SHA-1 was tried, and its failure hid the hello's.
     */
    @Test
    void aHelloRefusedIsTheFailureNamedNotAScramSha1TriedAnyway() throws Exception {
        BsonDocument refusal = new BsonDocument("ok", new BsonDouble(0)).append("code", new BsonInt32(13))
                .append("codeName", new BsonString("Unauthorized")).append("errmsg", new BsonString("hello is not allowed here"));
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<String> firstCommand = CompletableFuture.supplyAsync(() -> {
                try (Socket socket = server.accept()) {
                    InputStream in = socket.getInputStream();
                    byte[] request = ScriptedMongodWire.readMessage(in, 48_000_000);
                    socket.getOutputStream().write(ScriptedMongodWire.buildOpMsg(1, ScriptedMongodWire.requestId(request), 0, refusal, null));
                    in.read(); // until the client closes, or sends what it should not
                    return ScriptedMongodWire.parseOpMsg(request).body().getFirstKey();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            try (BlockingCommandClient client = new BlockingCommandClient("127.0.0.1", server.getLocalPort(), 5_000)) {
                AuthenticationException e = assertThrows(AuthenticationException.class,
                        () -> Authenticator.authenticate(client, new Credential("alice", "pw", "admin", null)));
                assertEquals("cannot authenticate as 'alice' on admin (mechanism negotiated): the hello that negotiates the mechanism"
                        + " failed: Unauthorized (13): hello is not allowed here", e.getMessage());
            }
            assertEquals("hello", firstCommand.join());
        }
    }
}
