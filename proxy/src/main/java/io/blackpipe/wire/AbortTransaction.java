package io.blackpipe.wire;

import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;

/** The abortTransaction the proxy sends of its own, as a driver words it: a session's transaction, by its number. */
public final class AbortTransaction {
    private AbortTransaction() {
    }

    /** The abort of transaction {@code txnNumber} of the session {@code lsid} names ({@code {id: <UUID>}}, as drivers send it). */
    public static BsonDocument of(BsonDocument lsid, long txnNumber) {
        return new BsonDocument("abortTransaction", new BsonInt32(1))
                .append("lsid", lsid)
                .append("txnNumber", new BsonInt64(txnNumber))
                .append("autocommit", BsonBoolean.FALSE)
                .append("$db", new BsonString("admin"));
    }

    /** The abort of transaction {@code txnNumber} of session {@code session}. */
    public static BsonDocument of(UUID session, long txnNumber) {
        return of(new BsonDocument("id", new BsonBinary(session)), txnNumber);
    }
}
