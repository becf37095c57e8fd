package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/**
 * An error a rule gives a hello is answered in the hello's own protocol: OP_REPLY to a legacy
 * OP_QUERY isMaster (the handshake drivers send first), OP_MSG to an OP_MSG hello; once the rule
 * is spent the member's own (rewritten) hello reply comes back.
 */
class HelloFaultsWireTest {
    @Test
    void anErrorForAHelloComesInTheHellosOwnProtocol() throws Exception {
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            proxy.rules().put(proxy.ruleParser().parse("sick", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: {times: 2}, data: {failCommands: ['isMaster'], errorCode: 91}}")));
            Member member = proxy.members().get(0);
            try (RawClient client = RawClient.connect(member.advertised())) {
                byte[] legacy = client.roundTrip(ScriptedMongodWire.buildOpQuery(6, 0, "admin.$cmd", 0, -1,
                        new BsonDocument("isMaster", new BsonInt32(1))));
                assertEquals(ScriptedMongodWire.OP_REPLY, ScriptedMongodWire.opCode(legacy));
                assertEquals(6, ScriptedMongodWire.intLE(legacy, 8), "responseTo");
                BsonDocument error = ScriptedMongodWire.parseOpReply(legacy).documents().get(0);
                assertEquals(0.0, error.getNumber("ok").doubleValue(), error.toJson());
                assertEquals(91, error.getInt32("code").getValue());
                assertEquals("ShutdownInProgress", error.getString("codeName").getValue());

                byte[] reply = client.roundTrip(ScriptedMongodWire.buildOpMsg(7, 0, 0,
                        new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin")), null));
                assertEquals(ScriptedMongodWire.OP_MSG, ScriptedMongodWire.opCode(reply));
                BsonDocument body = ScriptedMongodWire.decodeDocument(reply, 21, ScriptedMongodWire.intLE(reply, 21));
                assertEquals(91, body.getInt32("code").getValue(), "a rule on isMaster fails hello too: " + body.toJson());

                reply = client.roundTrip(ScriptedMongodWire.buildOpMsg(8, 0, 0,
                        new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin")), null));
                body = ScriptedMongodWire.decodeDocument(reply, 21, ScriptedMongodWire.intLE(reply, 21));
                assertEquals(1.0, body.getNumber("ok").doubleValue(), "the rule is spent: " + body.toJson());
                assertFalse(body.containsKey("code"));
            }
            assertEquals(1, Meters.faults(proxy.registry(), "errorReply", "isMaster"));
            assertEquals(1, Meters.faults(proxy.registry(), "errorReply", "hello"));
            assertEquals(0, Meters.attempts(proxy.registry(), "hello") + Meters.attempts(proxy.registry(), "isMaster"));
        }
    }
}
