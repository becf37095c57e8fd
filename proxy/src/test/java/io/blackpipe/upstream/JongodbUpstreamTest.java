package io.blackpipe.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.UnaryOperator;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.junit.jupiter.api.Test;

/** Starts a real jongodb (installing it from npm if the cache is empty) and checks start and close. */
class JongodbUpstreamTest {

    @Test
    void startsAWritablePrimaryAndCleansUpOnClose() throws IOException {
        JongodbInstaller installer = JongodbInstaller.fromEnvironment();
        assumeJongodbCanRun(installer);
        Path tempDir;
        try (JongodbUpstream upstream = JongodbUpstream.start(installer)) {
            int port = upstream.port();
            assertEquals("mongodb://127.0.0.1:" + port + "/?replicaSet=" + upstream.replicaSetName(), upstream.uri());
            assertEquals("jongodb 0.1.6 single-node replica set at 127.0.0.1:" + port, upstream.description());
            try (BlockingCommandClient client = new BlockingCommandClient("127.0.0.1", port, 5_000)) {
                BsonDocument hello = client.run("admin", new BsonDocument("hello", new BsonInt32(1)));
                assertTrue(hello.getBoolean("isWritablePrimary").getValue(), hello.toJson());
                assertEquals(upstream.replicaSetName(), hello.getString("setName").getValue());
            }
            tempDir = upstream.logFile().getParent();
            assertTrue(Files.readString(upstream.logFile()).contains("JONGODB_URI="), "ready line is in the log");
            upstream.close();
            assertFalse(upstream.isRunning(), "close() stops jongodb");
            upstream.close(); // a second close is harmless
        }
        assertFalse(Files.exists(tempDir), "close() deletes " + tempDir);
    }

    /** jongodb runs on Linux x86-64 alone, installed once with npm; elsewhere these tests have nothing to start, and say why. */
    private static void assumeJongodbCanRun(JongodbInstaller installer) {
        String platform = JongodbInstaller.platformProblem(System.getProperty("os.name"), System.getProperty("os.arch"));
        assumeTrue(platform == null, platform);
        assumeTrue(JongodbInstaller.problemWith(installer.installDir()) == null || PathLookup.find("npm").isPresent(),
                "jongodb is not installed in " + installer.installDir() + " and npm is not on PATH to install it");
    }

    private static int code(BsonDocument reply) {
        return reply.isNumber("code") ? reply.getNumber("code").intValue() : 0;
    }

    /** What `local`'s note says jongodb lacks, it lacks; a release that gains one fails this, and the note is mended. */
    @Test
    void lacksWhatLocalsNoteSaysItLacks() throws IOException {
        JongodbInstaller installer = JongodbInstaller.fromEnvironment();
        assumeJongodbCanRun(installer);
        try (JongodbUpstream upstream = JongodbUpstream.start(installer);
             BlockingCommandClient client = new BlockingCommandClient("127.0.0.1", upstream.port(), 5_000)) {
            BsonDocument inserted = client.run("app", BsonDocument.parse("{insert: 'c', documents: [{_id: 1, tags: ['a']}]}"));
            assertEquals(1, inserted.getNumber("n").intValue(), "what it has, it does: " + inserted.toJson());
            Map<String, BsonDocument> asAnAppSendsThem = Map.of(
                    "create", BsonDocument.parse("{create: 'd'}"),
                    "drop", BsonDocument.parse("{drop: 'c'}"),
                    "dropDatabase", BsonDocument.parse("{dropDatabase: 1}"),
                    "dropIndexes", BsonDocument.parse("{dropIndexes: 'c', index: '*'}"),
                    "renameCollection", BsonDocument.parse("{renameCollection: 'app.c', to: 'app.d'}"),
                    "listCollections", BsonDocument.parse("{listCollections: 1, nameOnly: true}"),
                    "listDatabases", BsonDocument.parse("{listDatabases: 1, nameOnly: true}"));
            assertEquals(asAnAppSendsThem.keySet(), Set.copyOf(JongodbUpstream.MISSING_COMMANDS));
            for (String command : JongodbUpstream.MISSING_COMMANDS) {
                boolean admin = command.equals("renameCollection") || command.equals("listDatabases");
                BsonDocument reply = client.run(admin ? "admin" : "app", asAnAppSendsThem.get(command));
                assertEquals(59, code(reply), command + ": " + reply.toJson());
            }
            for (String operator : JongodbUpstream.MISSING_UPDATE_OPERATORS) {
                BsonDocument reply = client.run("app", BsonDocument.parse("{update: 'c', updates: [{q: {_id: 1}, u: {'"
                        + operator + "': {tags: 'a'}}}]}"));
                assertEquals(14, code(reply), operator + ": " + reply.toJson());
            }
            for (String caveat : List.of("create, drop, dropDatabase, dropIndexes, renameCollection, listCollections or listDatabases"
                    + " command", "$push or $pull")) {
                assertTrue(upstream.caveats().get(0).contains(caveat), upstream.caveats().get(0));
            }
            // a batch that meets a duplicate key is refused whole, as the command's error: blackpipe inserts it again (DuplicateKeyBatches)
            BsonDocument batch = client.run("app", BsonDocument.parse("{insert: 'c', documents: [{_id: 2}, {_id: 1}, {_id: 3}],"
                    + " ordered: false}"));
            assertEquals(11000, code(batch), batch.toJson());
            BsonDocument stored = client.run("app", BsonDocument.parse("{count: 'c'}"));
            assertEquals(1, stored.getNumber("n").intValue(), "none of the batch was applied: " + stored.toJson());
            assertFalse(String.join("\n", upstream.caveats()).contains("batch"), upstream.caveats()::toString);
            // a transaction puts back at its commit the document it wrote, over a write outside it since it began: the second
            BsonDocument lsid = new BsonDocument("id", new BsonBinary(UUID.randomUUID()));
            UnaryOperator<BsonDocument> inTheTransaction = command -> command.append("lsid", lsid)
                    .append("txnNumber", new BsonInt64(1)).append("autocommit", BsonBoolean.FALSE);
            client.run("app", inTheTransaction.apply(BsonDocument.parse("{insert: 'other', documents: [{_id: 1}], startTransaction: true}")));
            BsonDocument outside = client.run("app", BsonDocument.parse("{update: 'c', updates: [{q: {_id: 1}, u: {$set: {by: 'outside'}}}]}"));
            assertEquals(1, outside.getNumber("nModified").intValue(), outside.toJson());
            BsonDocument inside = client.run("app", inTheTransaction.apply(BsonDocument.parse("{update: 'c', updates: [{q: {_id: 1},"
                    + " u: {$set: {n: 1}}}]}")));
            assertEquals(1, inside.getNumber("nModified").intValue(), "no WriteConflict, as mongod would refuse it: " + inside.toJson());
            BsonDocument committed = client.run("admin", inTheTransaction.apply(BsonDocument.parse("{commitTransaction: 1}")));
            assertEquals(1.0, committed.getNumber("ok").doubleValue(), committed.toJson());
            BsonDocument found = client.run("app", BsonDocument.parse("{find: 'c', filter: {_id: 1}}"));
            BsonDocument document = found.getDocument("cursor").getArray("firstBatch").get(0).asDocument();
            assertEquals(BsonDocument.parse("{_id: 1, tags: ['a'], n: 1}"), document, "the outside write lost at the commit");
            assertTrue(upstream.caveats().get(1).startsWith("jongodb runs a transaction on a copy of the data taken as it began"),
                    upstream.caveats().get(1));
            // MongoDB 8.0's bulkWrite, as the Java and Node.js drivers send it whatever the wire version: its own takes a collection
            BsonDocument bulkWrite = client.run("admin", BsonDocument.parse("{bulkWrite: 1, ops: [{insert: 0, document: {_id: 9}}],"
                    + " nsInfo: [{ns: 'app.c'}]}"));
            assertEquals(14, code(bulkWrite), bulkWrite.toJson());
            assertEquals(1, client.run("app", BsonDocument.parse("{count: 'c'}")).getNumber("n").intValue(), "nothing inserted");
            assertTrue(upstream.caveats().get(2).startsWith("jongodb's bulkWrite command is one of its own"), upstream.caveats().get(2));
        }
    }
}
