package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoClientSettings;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.connection.ServerDescription;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.testing.WireSocket;
import io.blackpipe.topology.Member;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A simulated set over the lane's one node, asked with the read preferences a real set's members
 * take: every member's commands reach the one real node without a read preference other than
 * primary, which the driver and the simulated member have acted on already. jongodb takes only
 * primary reads, so before, a ping or buildInfo a driver sent to a secondary, any read on a member
 * dialled directly (drivers send primaryPreferred), and the handshakes of a Node.js driver given
 * readPreference=secondary (mongosh's, which then never connected) failed with jongodb's refusal.
 */
class SimulatedReadPreferenceTest {
    /** A client of the simulated set that hears from every member within half a second. */
    private static MongoClient client(BlackPipe blackPipe) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(blackPipe.connectionString() + "&heartbeatFrequencyMS=500"))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS)).build());
    }

    /** Inserts {_id: 1} into db.c, then waits until the driver knows both secondaries. */
    private static void insertOneAndHearFromBothSecondaries(MongoClient client, String db) throws InterruptedException {
        client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
        Await.until(Duration.ofSeconds(10), "the driver has heard from both secondaries", () -> client.getClusterDescription()
                .getServerDescriptions().stream().filter(ServerDescription::isSecondary).count() == 2);
    }

    @Test
    void everyMembersCommandsReachTheRealNodeWithoutAReadPreferenceItMayRefuse() throws Exception {
        String db = UpstreamLane.freshDatabaseName("simulated-read-preference");
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.singleNodeUri()).simulateMembers(3).start();
             MongoClient client = client(blackPipe)) {
            insertOneAndHearFromBothSecondaries(client, db);

            for (String command : new String[] {"ping", "buildInfo"}) {
                Document reply = client.getDatabase("admin").runCommand(new Document(command, 1), ReadPreference.secondary());
                assertEquals(1.0, reply.get("ok", Number.class).doubleValue(), command + " on a secondary: " + reply.toJson());
            }
            assertEquals(1, client.getDatabase(db).withReadPreference(ReadPreference.secondary()).getCollection("c").countDocuments());

            Member primary = blackPipe.server().members().get(0);
            try (MongoClient direct = MongoClients.create("mongodb://" + primary.advertised() + "/?directConnection=true")) {
                for (ReadPreference mode : new ReadPreference[] {ReadPreference.primaryPreferred(), ReadPreference.nearest(),
                        ReadPreference.secondaryPreferred()}) { // a direct connection sends primaryPreferred; nearest may pick the primary
                    assertEquals(1, direct.getDatabase(db).withReadPreference(mode).getCollection("c").countDocuments(),
                            "a " + mode.getName() + " read on the primary dialled directly");
                }
            }

            Member secondary = blackPipe.server().members().get(1);
            try (WireSocket raw = new WireSocket(secondary.advertised().port(), 1, 10_000)) {
                raw.sendMsg(0, new BsonDocument("hello", new BsonInt32(1))
                        .append("$readPreference", new BsonDocument("mode", new BsonString("secondary")))
                        .append("$db", new BsonString("admin")));
                BsonDocument hello = ScriptedMongodWire.parseOpMsg(raw.read()).body();
                assertEquals(1.0, hello.getNumber("ok").doubleValue(), hello::toJson);
                assertEquals(secondary.advertised().toString(), hello.getString("me").getValue());
            }
            try (WireSocket raw = new WireSocket(secondary.advertised().port(), 1, 10_000)) {
                // the Node.js driver's first handshake: OP_QUERY, the read preference beside the command
                raw.sendRaw(ScriptedMongodWire.buildOpQuery(7, 0, "admin.$cmd", 0, -1, new BsonDocument("hello", new BsonInt32(1))
                        .append("$readPreference", new BsonDocument("mode", new BsonString("secondary")))));
                BsonDocument hello = ScriptedMongodWire.parseOpReply(raw.read()).documents().get(0);
                assertEquals(1.0, hello.getNumber("ok").doubleValue(), hello::toJson);
                assertEquals(secondary.advertised().toString(), hello.getString("me").getValue());
            }
        }
    }

    /**
     * A rule on the read preference the command carries ({@code "$readPreference.mode"}) breaks the
     * secondary reads alone: a rule looks into the command as the client sent it, before a simulated
     * member takes its read preference off for the node.
     */
    @Test
    void aRuleOnTheReadPreferenceBreaksSecondaryReadsAlone() throws Exception {
        String db = UpstreamLane.freshDatabaseName("simulated-read-preference-rule");
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.singleNodeUri()).simulateMembers(3).start();
             MongoClient client = client(blackPipe)) {
            insertOneAndHearFromBothSecondaries(client, db);
            String rule = blackPipe.fail("find").whereCommand(BsonDocument.parse("{'$readPreference.mode': {$in: ['secondary', 'nearest']}}"))
                    .errorCode(2);
            var onSecondary = client.getDatabase(db).withReadPreference(ReadPreference.secondary()).getCollection("c");
            MongoCommandException refused = assertThrows(MongoCommandException.class, () -> onSecondary.find().first());
            assertEquals(2, refused.getErrorCode());
            assertEquals(1, client.getDatabase(db).getCollection("c").find().first().getInteger("_id"), "a primary read runs");
            assertEquals(1, client.getDatabase(db).withReadPreference(ReadPreference.secondaryPreferred()).getCollection("c")
                    .find().first().getInteger("_id"), "and a secondaryPreferred one");
            assertEquals(1, blackPipe.fired(rule));
        }
    }

    /**
     * Every member reports its lastWrite, as a real set's members do (drivers read lastWriteDate to
     * judge a secondary's staleness): the node's own when it reports one, else one of now, as the
     * members of a simulated set never lag (they are the one node). Over jongodb, which reports
     * none, the Java driver refused a read with maxStalenessSeconds: "lastWriteDate should not be null".
     */
    @Test
    void aReadWithMaxStalenessGoesToASecondary() throws Exception {
        String db = UpstreamLane.freshDatabaseName("simulated-max-staleness");
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.singleNodeUri()).simulateMembers(3).start();
             MongoClient client = client(blackPipe)) {
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
            for (Member member : blackPipe.server().members()) {
                try (WireSocket raw = new WireSocket(member.advertised().port(), 1, 10_000)) {
                    raw.sendMsg(0, new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin")));
                    BsonDocument hello = ScriptedMongodWire.parseOpMsg(raw.read()).body();
                    assertTrue(hello.isDocument("lastWrite") && hello.getDocument("lastWrite").isDateTime("lastWriteDate"),
                            member.advertised() + ": " + hello.toJson());
                }
            }

            ReadPreference stalenessBound = ReadPreference.secondary(90, TimeUnit.SECONDS);
            assertEquals(1, client.getDatabase(db).withReadPreference(stalenessBound).getCollection("c").countDocuments());
            double onSecondaries = blackPipe.server().members().stream().skip(1)
                    .mapToDouble(m -> Meters.sum(blackPipe.server().registry(), "blackpipe.command.attempts", "command", "aggregate",
                            "member", m.upstream().toString())).sum();
            assertEquals(1.0, onSecondaries, "the count ran on a secondary");
        }
    }
}
