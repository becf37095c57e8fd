package io.blackpipe.topology;

import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import java.util.List;
import java.util.UUID;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Whether a member runs a retryable write again when it comes a second time with the same lsid and
 * txnNumber, as a driver retries one whose reply it never got. mongod answers the second from its
 * first run (the retryable writes spec); jongodb 0.1.6 runs it again. Asked by {@link HelloProbe}
 * only of a member that already refused what a mongod takes: it writes one document, and deletes it.
 */
final class RetriedWriteProbe {
    static final String DATABASE = "blackpipe_probe";
    static final String COLLECTION = "retried_writes";

    private RetriedWriteProbe() {
    }

    /** True when the member applied the retried increment a second time; false when once, or when it refused either part. */
    static boolean reapplies(BlockingCommandClient client) throws IOException {
        BsonDocument byId = new BsonDocument("_id", new BsonObjectId());
        BsonDocument increment = new BsonDocument("update", new BsonString(COLLECTION))
                .append("updates", new BsonArray(List.of(new BsonDocument("q", byId)
                        .append("u", new BsonDocument("$inc", new BsonDocument("n", new BsonInt32(1))))
                        .append("upsert", BsonBoolean.TRUE))))
                .append("lsid", new BsonDocument("id", new BsonBinary(UUID.randomUUID())))
                .append("txnNumber", new BsonInt64(1));
        if (!HelloProbe.isOk(client.run(DATABASE, increment)) || !HelloProbe.isOk(client.run(DATABASE, increment.clone()))) {
            return false;
        }
        BsonDocument found = client.run(DATABASE, new BsonDocument("find", new BsonString(COLLECTION)).append("filter", byId));
        client.run(DATABASE, new BsonDocument("delete", new BsonString(COLLECTION)).append("deletes",
                new BsonArray(List.of(new BsonDocument("q", byId).append("limit", new BsonInt32(1))))));
        return timesApplied(found) == 2;
    }

    private static int timesApplied(BsonDocument found) {
        if (!found.isDocument("cursor") || !found.getDocument("cursor").isArray("firstBatch")
                || found.getDocument("cursor").getArray("firstBatch").size() != 1) {
            return 0;
        }
        BsonValue document = found.getDocument("cursor").getArray("firstBatch").get(0);
        return document.isDocument() && document.asDocument().isNumber("n") ? document.asDocument().getNumber("n").intValue() : 0;
    }
}
