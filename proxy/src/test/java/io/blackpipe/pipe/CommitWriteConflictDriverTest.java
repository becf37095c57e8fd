package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodFrame;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Two transactions that write one document: mongod fails the second's statement with WriteConflict, labelled
 * TransientTransactionError, and withTransaction runs the transaction again. jongodb may let the statement through and
 * find the conflict at the commit ("commit transaction write conflict on _id=..."), with no label: withTransaction gave
 * up and the app saw the error (7 of a Go service's 200 transactions). The proxy gives that commit's WriteConflict the
 * label mongod gives a commit's (error_labels.cpp), so the transaction runs again. A {@link ScriptedMongod} that names
 * itself jongodb answers the commit so: jongodb's own conflict at the commit comes only under load, not on demand.
 */
class CommitWriteConflictDriverTest {
    private static final BsonDocument JONGODBS_COMMIT_CONFLICT = BsonDocument.parse("{ok: 0, errmsg: 'commit transaction write"
            + " conflict on _id=1', code: 112, codeName: 'WriteConflict'}");

    private static int transactionRuns(ScriptedMongod member, boolean jongodb) throws Exception {
        try (LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member)) {
            if (jongodb) {
                log.await(m -> m.startsWith("member " + member.address() + " is jongodb"), Duration.ofSeconds(5), "noting the member");
            }
            // scripted once the start's questions (which commit and update too) are done
            Await.until(Duration.ofSeconds(5), "the start's probe connections closed at the member", () -> member.openConnections() == 0);
            for (int run = 0; run < 2; run++) { // it runs no transactions: each run's statement is answered as one that ran
                member.failNext("update", BsonDocument.parse("{ok: 1, n: 1, nModified: 1}"));
            }
            member.failNext("commitTransaction", JONGODBS_COMMIT_CONFLICT);
            member.failNext("commitTransaction", BsonDocument.parse("{ok: 1}"));
            int commitsBefore = member.commandsReceived("commitTransaction").size(); // the start's questions commit too
            try (MongoClient client = ScriptedProxy.client(proxy.connectionString(), null);
                 ClientSession session = client.startSession()) {
                MongoCollection<Document> counters = client.getDatabase("shop").getCollection("counters");
                AtomicInteger runs = new AtomicInteger();
                session.withTransaction(() -> {
                    runs.incrementAndGet();
                    return counters.updateOne(session, Filters.eq("_id", 1), Updates.inc("n", 1), new UpdateOptions().upsert(true));
                });
                assertEquals(runs.get(), member.commandsReceived("commitTransaction").size() - commitsBefore,
                        "each run's commit reached the member: the one that met the conflict, and the one that committed");
                return runs.get();
            }
        }
    }

    @Test
    void jongodbsWriteConflictAtACommitIsLabelledSoWithTransactionRunsItAgain() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().withoutEndSessions().version("8.0.0-jongodb").start()) {
            assertEquals(2, transactionRuns(member, true), "run again after the commit's WriteConflict, then committed");
            List<ScriptedMongodFrame> conflicts = member.framesSent(f -> "commitTransaction".equals(f.commandName())
                    && f.document() != null && f.document().getInt32("code", new BsonInt32(0)).getValue() == 112);
            assertEquals(1, conflicts.size(), "the member said the conflict once");
            BsonDocument conflict = conflicts.get(0).document();
            assertFalse(conflict.containsKey("errorLabels"), "the member said it without a label: " + conflict.toJson());
        }
    }

    /** A member that is no jongodb answers as it does: the proxy adds no label to it (mongod labels its own). */
    @Test
    void anotherMembersCommitErrorPassesAsItCame() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().withoutEndSessions().start()) {
            MongoException error = org.junit.jupiter.api.Assertions.assertThrows(MongoCommandException.class, () -> transactionRuns(member, false));
            assertEquals(112, error.getCode());
            assertTrue(error.getErrorLabels().isEmpty(), "as the member said it: " + error.getErrorLabels());
        }
    }
}
