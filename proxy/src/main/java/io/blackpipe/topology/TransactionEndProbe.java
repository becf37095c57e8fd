package io.blackpipe.topology;

import io.blackpipe.wire.AbortTransaction;
import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Whether a member refuses a transaction's end that carries {@code $readPreference: {mode: "primary"}}, as PyMongo 3
 * sends it: jongodb 0.1.6 answers BadValue ("readPreference is not allowed for committransaction") where mongod takes
 * it. Asked with an abortTransaction of a session that has none, once without the read preference and once with it:
 * mongod answers both alike (NoSuchTransaction), a member that refuses it answers the second otherwise. Nothing is
 * written. Asked by {@link HelloProbe} only of a member that already refused what a mongod takes; so is
 * {@link #keepsSupersededOpen}.
 */
final class TransactionEndProbe {
    private TransactionEndProbe() {
    }

    static boolean refusesReadPreference(BlockingCommandClient client) throws IOException {
        BsonDocument without = client.run("admin", abortOfNoTransaction());
        BsonDocument with = client.run("admin", abortOfNoTransaction()
                .append("$readPreference", new BsonDocument("mode", new BsonString("primary"))));
        return !HelloProbe.isOk(with) && !code(with).equals(code(without));
    }

    /**
     * Whether a session's transaction stays open when the session starts a newer one, the newer one refused: asked with
     * a find that starts transaction 1 in {@link WriteProbe#DATABASE} and one that starts transaction 2 in the same
     * session, which mongod takes (it aborts the first). Both are aborted after; nothing is written.
     */
    static boolean keepsSupersededOpen(BlockingCommandClient client) throws IOException {
        BsonBinary session = new BsonBinary(UUID.randomUUID());
        BsonDocument first = client.run(WriteProbe.DATABASE, startingTransaction(session, 1));
        if (!HelloProbe.isOk(first)) {
            return false; // no transactions here: nothing to keep open
        }
        BsonDocument second = client.run(WriteProbe.DATABASE, startingTransaction(session, 2));
        client.run("admin", AbortTransaction.of(new BsonDocument("id", session), 1));
        client.run("admin", AbortTransaction.of(new BsonDocument("id", session), 2));
        return !HelloProbe.isOk(second);
    }

    private static BsonDocument startingTransaction(BsonBinary session, long txnNumber) {
        return new BsonDocument("find", new BsonString("superseded")).append("filter", new BsonDocument())
                .append("lsid", new BsonDocument("id", session))
                .append("txnNumber", new BsonInt64(txnNumber))
                .append("startTransaction", BsonBoolean.TRUE)
                .append("autocommit", BsonBoolean.FALSE);
    }

    private static BsonDocument abortOfNoTransaction() {
        return AbortTransaction.of(UUID.randomUUID(), 1);
    }

    private static BsonValue code(BsonDocument reply) {
        BsonValue code = reply.get("code");
        return code == null ? BsonBoolean.valueOf(HelloProbe.isOk(reply)) : code;
    }
}
