package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.UpstreamLane;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A transaction whose commit never reached the member (reset before the server saw it, its retry too), and then the
 * same session's next transaction, as a driver's session pool hands the session out again. mongod aborts the open
 * transaction when the session's newer one begins; jongodb 0.1.6 kept it open and refused every later transaction of
 * the session ("transaction already in progress for this session": 221 failed transactions in a 13-minute soak). The
 * proxy aborts the open one first at a member that keeps it (found at start: MemberQuirks).
 */
class SupersededTransactionDriverTest extends DriverRigTest {
    @Test
    void theSessionsNextTransactionEndsTheOneWhoseCommitNeverArrivedAsMongodEndsIt() {
        MongoClient client = rig.client("");
        MongoCollection<Document> c = client.getDatabase(rig.db).getCollection("c");
        rig.serverSide("c").insertOne(new Document("_id", "before"));
        rig.rule("{times: 2}", "commitTransaction", "resetConnection: true"); // the commit and its one retry
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            c.insertOne(session, new Document("_id", "whose commit never arrived"));
            MongoException lost = assertThrows(MongoException.class, session::commitTransaction);
            assertTrue(lost.hasErrorLabel("UnknownTransactionCommitResult"), lost::toString);
            assertEquals(2, rig.faults("resetConnection", "commitTransaction"), "the commit and its retry, both reset");

            session.startTransaction();
            c.insertOne(session, new Document("_id", "the next transaction"));
            session.commitTransaction();
        }
        assertEquals(List.of(new Document("_id", "before"), new Document("_id", "the next transaction")),
                rig.serverSide("c").find().sort(new Document("_id", 1)).into(new ArrayList<>()),
                "the next transaction committed, and the one before it was aborted, on " + UpstreamLane.name());
    }
}
