package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.WireSocket;
import java.io.IOException;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * A hello the member refuses (here a topologyVersion without maxAwaitTimeMS; PyMongo 3.11's
 * {@code command("isMaster")} on a direct connection to jongodb gets BadValue for its read
 * preference) is no word of the member about itself: the proxy neither takes it for the member's
 * state, which shapes the errors it injects, nor dresses it up as a simulated member's hello.
 */
class HelloErrorReplyTest {
    private static final String REFUSED_HELLO =
            "{hello: 1, topologyVersion: {processId: {$oid: '000000000000000000000001'}, counter: 0}, $db: 'admin'}";

    @Test
    void injectedErrorsStayShapedByTheMembersLastGoodHello() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket tool = new WireSocket(ScriptedProxy.port(proxy), 1, 5_000);
             WireSocket app = new WireSocket(ScriptedProxy.port(proxy), 1_000, 5_000)) {
            tool.sendMsg(0, BsonDocument.parse("{hello: 1, $db: 'admin'}"));
            assertEquals(1.0, body(tool.read()).getNumber("ok").doubleValue());
            tool.sendMsg(0, BsonDocument.parse(REFUSED_HELLO));
            assertEquals(0.0, body(tool.read()).getNumber("ok").doubleValue(), "the member refuses it");

            proxy.rules().put(proxy.ruleParser().parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: {times: 1}, data: {failCommands: ['insert'], errorCode: 10107}}")));
            app.sendMsg(0, BsonDocument.parse("{insert: 'c', documents: [{_id: 1}], txnNumber: {$numberLong: '1'},"
                    + " lsid: {id: {$binary: {base64: 'AAAAAAAAQAiAAAAAAAAAAQ==', subType: '04'}}}, $db: 'test'}"));
            BsonDocument error = body(app.read());
            assertTrue(error.containsKey("errorLabels") && error.getArray("errorLabels").contains(new org.bson.BsonString("RetryableWriteError")),
                    "labelled as the 7.0 member would label it: " + error.toJson());
            assertTrue(error.containsKey("topologyVersion"), "with the member's topologyVersion: " + error.toJson());
        }
    }

    @Test
    void aSimulatedMembersRefusalComesAsTheNodeSentIt() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(scripted.uri("replicaSet=" + ScriptedMongod.SET_NAME))
                     .withSimulatedMembers(3));
             WireSocket tool = new WireSocket(proxy.members().get(1).advertised().port(), 1, 5_000)) {
            tool.sendMsg(0, BsonDocument.parse(REFUSED_HELLO));
            BsonDocument refusal = body(tool.read());
            assertEquals(0.0, refusal.getNumber("ok").doubleValue());
            for (String helloField : new String[] {"setName", "hosts", "me", "primary", "isWritablePrimary", "secondary"}) {
                assertFalse(refusal.containsKey(helloField), helloField + " in an error reply: " + refusal.toJson());
            }
        }
    }

    private static BsonDocument body(byte[] reply) throws IOException {
        return ScriptedMongodWire.parseOpMsg(reply).body();
    }
}
