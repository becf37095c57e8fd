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
import org.bson.types.ObjectId;

/**
 * How a member takes two writes where jongodb 0.1.6 does otherwise than mongod. A retryable write
 * that comes a second time with the same lsid and txnNumber, as a driver retries one whose reply it
 * never got: mongod answers it from its first run (the retryable writes spec), jongodb runs it again.
 * A one-document insert of an _id already there: mongod answers ok: 1 with the duplicate key in
 * writeErrors, jongodb ok: 0 with it as the command's error. Asked by {@link HelloProbe} only of a
 * member that already refused what a mongod takes, in database blackpipe_probe; what it writes, it
 * deletes, and what an interrupted probe left there an hour ago or more too.
 */
final class WriteProbe {
    static final String DATABASE = "blackpipe_probe";
    static final String COLLECTION = "writes";
    private static final int DUPLICATE_KEY = 11000;
    private static final long INTERRUPTED_AFTER_SECONDS = 3600;

    /** What the member does otherwise than mongod. */
    record Answer(boolean reappliesRetriedWrites, boolean duplicateKeyAsCommandError) {
    }

    private WriteProbe() {
    }

    static Answer ask(BlockingCommandClient client) throws IOException {
        deleteInterruptedProbes(client);
        BsonDocument counter = new BsonDocument("_id", new BsonObjectId());
        BsonDocument inserted = new BsonDocument("_id", new BsonObjectId());
        Answer answer;
        try {
            answer = new Answer(reappliesRetriedWrites(client, counter), duplicateKeyAsCommandError(client, inserted));
        } catch (IOException e) {
            deleteQuietly(client, counter, inserted);
            throw e;
        }
        deleteQuietly(client, counter, inserted); // what the member answered stands, deleted or not
        return answer;
    }

    /**
     * Deletes what probes cut off mid-way (a member that let a question wait past its time) left here an hour ago or
     * more: their ids tell when they were made. A probe of another proxy under way now is left alone.
     */
    private static void deleteInterruptedProbes(BlockingCommandClient client) {
        long hourAgoSeconds = System.currentTimeMillis() / 1000 - INTERRUPTED_AFTER_SECONDS;
        ObjectId madeAnHourAgo = new ObjectId(String.format("%08x0000000000000000", hourAgoSeconds));
        delete(client, new BsonDocument("q", new BsonDocument("_id", new BsonDocument("$lt", new BsonObjectId(madeAnHourAgo))))
                .append("limit", new BsonInt32(0)));
    }

    private static void deleteQuietly(BlockingCommandClient client, BsonDocument counter, BsonDocument inserted) {
        delete(client, new BsonDocument("q", counter).append("limit", new BsonInt32(1)),
                new BsonDocument("q", inserted).append("limit", new BsonInt32(1)));
    }

    /** Deletes as the statements say; a refusal or no answer leaves the documents to a later probe. */
    private static void delete(BlockingCommandClient client, BsonDocument... statements) {
        try {
            client.run(DATABASE, new BsonDocument("delete", new BsonString(COLLECTION)).append("deletes", new BsonArray(List.of(statements))));
        } catch (IOException e) {
            // left to the next probe that comes an hour later or more
        }
    }

    /** True when the member applied the retried increment a second time; false when once, or when it refused either part. */
    private static boolean reappliesRetriedWrites(BlockingCommandClient client, BsonDocument byId) throws IOException {
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
        return timesApplied(found) == 2;
    }

    /** True when the second insert of one _id is refused as a command (ok: 0, 11000), not as a write error. */
    private static boolean duplicateKeyAsCommandError(BlockingCommandClient client, BsonDocument document) throws IOException {
        BsonDocument insert = new BsonDocument("insert", new BsonString(COLLECTION)).append("documents", new BsonArray(List.of(document)));
        if (!HelloProbe.isOk(client.run(DATABASE, insert))) {
            return false;
        }
        BsonDocument again = client.run(DATABASE, insert.clone());
        return !HelloProbe.isOk(again) && again.isNumber("code") && again.getNumber("code").intValue() == DUPLICATE_KEY;
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
