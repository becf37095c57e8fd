package io.blackpipe.topology;

import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Whether a member refuses a transaction's end that carries {@code $readPreference: {mode: "primary"}}, as PyMongo 3
 * sends it: jongodb 0.1.6 answers BadValue ("readPreference is not allowed for committransaction") where mongod takes
 * it. Asked with an abortTransaction of a session that has none, once without the read preference and once with it:
 * mongod answers both alike (NoSuchTransaction), a member that refuses it answers the second otherwise. Nothing is
 * written. Asked by {@link HelloProbe} only of a member that already refused what a mongod takes.
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

    private static BsonDocument abortOfNoTransaction() {
        return new BsonDocument("abortTransaction", new BsonInt32(1))
                .append("lsid", new BsonDocument("id", new BsonBinary(UUID.randomUUID())))
                .append("txnNumber", new BsonInt64(1))
                .append("autocommit", BsonBoolean.FALSE);
    }

    private static BsonValue code(BsonDocument reply) {
        BsonValue code = reply.get("code");
        return code == null ? BsonBoolean.valueOf(HelloProbe.isOk(reply)) : code;
    }
}
