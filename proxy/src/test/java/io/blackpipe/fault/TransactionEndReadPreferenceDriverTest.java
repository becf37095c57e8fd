package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import io.blackpipe.testing.UpstreamLane;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A transaction's commitTransaction and abortTransaction carrying {@code $readPreference: {mode: "primary"}}, as
 * PyMongo 3 sends them (on every command of a transaction), sent here by the Java driver's runCommand in the
 * transaction's session. mongod takes them; jongodb 0.1.6 refused both (BadValue "readPreference is not allowed for
 * committransaction"), so none of PyMongo's transactions ended through `blackpipe local`. The proxy drops the read
 * preference on their way to a member that refuses it there (found at start: MemberQuirks).
 */
class TransactionEndReadPreferenceDriverTest extends DriverRigTest {
    private static final Document PRIMARY = new Document("mode", "primary");

    @ParameterizedTest(name = "{0}")
    @CsvSource({"commitTransaction, true", "abortTransaction, false"})
    void aTransactionsEndThatCarriesReadPreferencePrimaryEndsIt(String command, boolean commits) {
        MongoClient client = rig.client("");
        MongoDatabase db = client.getDatabase(rig.db);
        rig.serverSide("c").insertOne(new Document("_id", "before"));
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            db.getCollection("c").insertOne(session, new Document("_id", "in the transaction"));
            Document reply = db.runCommand(session, new Document(command, 1).append("$readPreference", PRIMARY));
            assertEquals(1.0, reply.get("ok", Number.class).doubleValue(), reply::toJson);
        }
        List<Document> stored = commits ? List.of(new Document("_id", "before"), new Document("_id", "in the transaction"))
                : List.of(new Document("_id", "before"));
        assertEquals(stored, rig.serverSide("c").find().sort(new Document("_id", 1)).into(new ArrayList<>()),
                "what the server holds after the " + command + ", on " + UpstreamLane.name());
    }
}
