package io.blackpipe.pipe;

import static io.blackpipe.pipe.ScriptedProxy.port;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.WireSocket;
import java.io.ByteArrayOutputStream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/**
 * A client may send its next request before the reply to the one before (pipelining): mongod reads
 * and answers them in turn. Each reply must be treated as the answer to its own request, and
 * the replies must reach the client in the order mongod would send them.
 */
class PipelinedRequestsTest {

    @Test
    void aPipelinedReplyNamingTheMembersIsRewrittenAndCountedAsItsOwn() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = new WireSocket(port(proxy), 100, (int) ScriptedProxy.WAIT.toMillis())) {
            ByteArrayOutputStream both = new ByteArrayOutputStream();
            both.write(ScriptedMongodWire.buildOpMsg(100, 0, 0,
                    new BsonDocument("replSetGetStatus", new BsonInt32(1)).append("$db", new BsonString("admin")), null));
            both.write(ScriptedMongodWire.buildOpMsg(101, 0, 0,
                    new BsonDocument("ping", new BsonInt32(1)).append("$db", new BsonString("admin")), null));
            raw.sendRaw(both.toByteArray()); // the second goes before the first is answered

            byte[] status = raw.read();
            assertEquals(100, ScriptedMongodWire.responseTo(status));
            String name = ScriptedMongodWire.parseOpMsg(status).body().getArray("members").get(0).asDocument()
                    .getString("name").getValue();
            assertEquals(ScriptedProxy.advertised(proxy), name, "rs.status() names the proxy, pipelined or not");
            assertEquals(101, ScriptedMongodWire.responseTo(raw.read()));
            ScriptedProxy.awaitTrue("the first command's reply ends it as a success",
                    () -> Meters.outcomes(proxy.registry(), "replSetGetStatus", "ok") == 1);
        }
    }

    @Test
    void anInjectedErrorOnAPipelinedRequestComesAfterTheReplyToTheOneBefore() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = new WireSocket(port(proxy), 100, (int) ScriptedProxy.WAIT.toMillis())) {
            proxy.rules().put(proxy.ruleParser().parse("fail-ping", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: 'alwaysOn', data: {failCommands: ['ping'], errorCode: 2}}")));
            ByteArrayOutputStream both = new ByteArrayOutputStream();
            both.write(ScriptedMongodWire.buildOpMsg(100, 0, 0,
                    new BsonDocument("buildInfo", new BsonInt32(1)).append("$db", new BsonString("admin")), null));
            both.write(ScriptedMongodWire.buildOpMsg(101, 0, 0,
                    new BsonDocument("ping", new BsonInt32(1)).append("$db", new BsonString("admin")), null));
            raw.sendRaw(both.toByteArray());

            assertEquals(100, ScriptedMongodWire.responseTo(raw.read()), "mongod answers pipelined requests in order");
            assertEquals(101, ScriptedMongodWire.responseTo(raw.read()));
        }
    }
}
