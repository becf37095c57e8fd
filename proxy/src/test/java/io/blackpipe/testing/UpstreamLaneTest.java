package io.blackpipe.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** The lane starts, and the real driver can write to it and read back what the server stored. */
class UpstreamLaneTest {

    @Test
    void laneHasAKnownNameAndAMongodbUri() {
        assertTrue(Set.of("external", "mongod", "testcontainers", "jongodb").contains(UpstreamLane.name()), UpstreamLane.name());
        assertTrue(UpstreamLane.uri().startsWith("mongodb://"), UpstreamLane.uri());
    }

    /** What needs one node (--simulate-members) gets one on every lane: the mongod lane's primary, dialled directly. */
    @Test
    void singleNodeUriIsOneNodeOnEveryLane() {
        try (MongoClient client = com.mongodb.client.MongoClients.create(UpstreamLane.singleNodeUri())) {
            BsonDocument hello = client.getDatabase("admin").runCommand(new BsonDocument("hello", new org.bson.BsonInt32(1)),
                    BsonDocument.class);
            assertTrue(hello.getBoolean("isWritablePrimary", hello.getBoolean("ismaster", org.bson.BsonBoolean.FALSE)).getValue(),
                    hello::toJson);
        }
        assertEquals("mongodb://u:p@b:2/?authSource=admin&directConnection=true",
                UpstreamLane.directlyTo("mongodb://u:p@a:1,b:2,c:3/?replicaSet=rs0&authSource=admin", "b:2"));
        assertEquals("mongodb://b:2/?directConnection=true", UpstreamLane.directlyTo("mongodb://a:1,b:2/?replicaSet=rs0", "b:2"));
        assertEquals("mongodb://b:2/db?directConnection=true", UpstreamLane.directlyTo("mongodb://a:1,b:2/db", "b:2"));
        assertEquals("mongodb://b:2/?directConnection=true", UpstreamLane.directlyTo("mongodb://a:1,b:2", "b:2"));
    }

    @Test
    void isJongodbMatchesWhatTheServerSaysItIs() {
        try (MongoClient client = UpstreamLane.directClient()) {
            Document buildInfo = client.getDatabase("admin").runCommand(new Document("buildInfo", 1));
            assertEquals(buildInfo.getString("version").contains("jongodb"), UpstreamLane.isJongodb(), buildInfo.toJson());
        }
    }

    @Test
    void replicaSetLanesNameTheirSetInTheUriAndInHello() {
        BsonDocument hello = UpstreamLane.directHello();
        assertTrue(hello.getBoolean("isWritablePrimary").getValue(), hello.toJson());
        if (UpstreamLane.name().equals("mongod") || UpstreamLane.name().equals("jongodb")) {
            String setName = hello.getString("setName").getValue();
            assertTrue(UpstreamLane.uri().contains("replicaSet=" + setName), UpstreamLane.uri() + " vs " + hello.toJson());
        }
        if (UpstreamLane.name().equals("mongod")) {
            assertEquals(3, hello.getArray("hosts").size(), hello.toJson());
        }
    }

    @Test
    void insertedDocumentsAreReadBackFromTheServer() {
        String database = UpstreamLane.freshDatabaseName("laneSmoke");
        try (MongoClient writer = UpstreamLane.directClient()) {
            MongoCollection<Document> things = writer.getDatabase(database).getCollection("things");
            things.insertOne(new Document("_id", 1).append("name", "first").append("tags", List.of("a", "b")));
            things.insertMany(List.of(new Document("_id", 2).append("name", "second"),
                    new Document("_id", 3).append("name", "third")));
        }
        // A second, independent client: what it sees is what the server holds, not a client-side cache.
        try (MongoClient reader = UpstreamLane.directClient()) {
            MongoCollection<Document> things = reader.getDatabase(database).getCollection("things");
            assertEquals(3, things.countDocuments());
            Document first = things.find(Filters.eq("_id", 1)).first();
            assertEquals(new Document("_id", 1).append("name", "first").append("tags", List.of("a", "b")), first);
            List<String> names = things.find().sort(Sorts.ascending("_id")).map(d -> d.getString("name")).into(new ArrayList<>());
            assertEquals(List.of("first", "second", "third"), names);
        }
    }

    @Test
    void freshDatabaseNamesAreUniqueAndValid() {
        String a = UpstreamLane.freshDatabaseName("same prefix/with.bad$chars");
        String b = UpstreamLane.freshDatabaseName("same prefix/with.bad$chars");
        assertNotEquals(a, b);
        for (String name : List.of(a, b)) {
            assertTrue(name.matches("[A-Za-z0-9_-]{1,63}"), name);
        }
        assertTrue(UpstreamLane.freshDatabaseName("x".repeat(200)).length() <= 63);
    }
}
