package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoNotPrimaryException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.BlackPipe;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.testing.WireSocket;
import io.blackpipe.topology.Member;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * mongod words its not-primary errors for the client that gets them (service_entry_point_common.cpp):
 * "not primary" once the connection's hello or isMaster said {@code helloOk: true}, as drivers'
 * handshakes have since 2021, and "not master" to one that never did, as every server before 4.4.2
 * said it to all. Drivers older than hello decide by those words: the Ruby driver 2.5 (Debian
 * bookworm's ruby-mongo) retries a write refused "not master" and gives up on one refused "not
 * primary". The Java driver says helloOk, so the legacy client here speaks raw wire messages, as
 * Ruby 2.5 does: an OP_QUERY isMaster without helloOk, then OP_MSG commands.
 */
class NotPrimaryWordingTest {
    private static final String LEGACY = "not master";
    private static final String LEGACY_NO_SECONDARY_OK = "not master and slaveOk=false";

    @Test
    void aSimulatedSecondaryWordsItsRefusalsAsMongodDoesForTheClient() throws Exception {
        String db = UpstreamLane.freshDatabaseName("not-primary-wording");
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.singleNodeUri()).simulateMembers(3).start()) {
            Member secondary = blackPipe.server().members().get(1);
            try (WireSocket legacy = handshake(secondary, false)) {
                assertRefused(legacy, insert(db), 10107, LEGACY);
                assertRefused(legacy, find(db), 13435, LEGACY_NO_SECONDARY_OK);
            }
            try (WireSocket modern = handshake(secondary, true)) {
                assertRefused(modern, insert(db), 10107, "not primary");
                assertRefused(modern, find(db), 13435, "not primary and secondaryOk=false");
            }
            try (MongoClient direct = MongoClients.create("mongodb://" + secondary.advertised() + "/?directConnection=true")) {
                MongoNotPrimaryException refused = assertThrows(MongoNotPrimaryException.class,
                        () -> direct.getDatabase(db).getCollection("c").insertOne(new Document("_id", 2)));
                assertTrue(refused.getErrorMessage().startsWith("not primary"), refused::getMessage); // the driver said helloOk
            }
            assertNothingWritten(db);
        }
    }

    @Test
    void anInjectedNotWritablePrimaryIsWordedAsMongodDoesForTheClient() throws Exception {
        String db = UpstreamLane.freshDatabaseName("not-primary-wording-rule");
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.singleNodeUri()).simulateMembers(3).start()) {
            blackPipe.rule("{configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                    + " data: {failCommands: ['insert'], error: 'NotWritablePrimary'}}");
            Member primary = blackPipe.server().members().get(0);
            try (WireSocket legacy = handshake(primary, false)) {
                assertRefused(legacy, insert(db), 10107, LEGACY);
            }
            try (WireSocket modern = handshake(primary, true)) {
                assertRefused(modern, insert(db), 10107, "not primary");
            }
            assertNothingWritten(db);
        }
    }

    /** A connection whose OP_QUERY isMaster says helloOk: true, or says nothing of it (as drivers before 2021). */
    private static WireSocket handshake(Member member, boolean helloOk) throws Exception {
        WireSocket socket = new WireSocket(member.advertised().port(), 1, 10_000);
        BsonDocument isMaster = new BsonDocument("isMaster", new BsonInt32(1))
                .append("client", new BsonDocument("driver", new BsonDocument("name", new BsonString("mongo-ruby-driver"))
                        .append("version", new BsonString("2.5.1"))));
        if (helloOk) {
            isMaster.append("helloOk", BsonBoolean.TRUE);
        }
        socket.sendRaw(ScriptedMongodWire.buildOpQuery(7, 0, "admin.$cmd", 0, -1, isMaster));
        BsonDocument reply = ScriptedMongodWire.parseOpReply(socket.read()).documents().get(0);
        assertEquals(1.0, reply.getNumber("ok").doubleValue(), reply::toJson);
        return socket;
    }

    private static BsonDocument insert(String db) {
        return new BsonDocument("insert", new BsonString("c"))
                .append("documents", new BsonArray(java.util.List.of(new BsonDocument("_id", new BsonInt32(1)))))
                .append("$db", new BsonString(db));
    }

    private static BsonDocument find(String db) {
        return new BsonDocument("find", new BsonString("c")).append("$db", new BsonString(db));
    }

    private static void assertRefused(WireSocket socket, BsonDocument command, int code, String errmsg) throws Exception {
        socket.sendMsg(0, command);
        BsonDocument reply = ScriptedMongodWire.parseOpMsg(socket.read()).body();
        assertEquals(0.0, reply.getNumber("ok").doubleValue(), reply::toJson);
        assertEquals(code, reply.getNumber("code").intValue(), reply::toJson);
        assertEquals(errmsg, reply.getString("errmsg").getValue(), reply::toJson);
    }

    /** The refused inserts never reached the server. */
    private static void assertNothingWritten(String db) {
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(0, direct.getDatabase(db).getCollection("c").countDocuments());
        }
    }
}
