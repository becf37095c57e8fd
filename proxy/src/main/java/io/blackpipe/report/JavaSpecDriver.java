package io.blackpipe.report;

import com.mongodb.ConnectionString;
import com.mongodb.MongoException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import org.bson.Document;

/** The spec operations with the real Java driver, retryWrites and retryReads on (the defaults). */
final class JavaSpecDriver implements SpecDriver {
    private static final long SELECTION_MILLIS = 10_000;

    @Override
    public String name() {
        return "Java driver " + com.mongodb.internal.build.MongoDriverVersion.VERSION;
    }

    @Override
    public String run(String uri, String operation) {
        try (MongoClient client = ReportRunner.client(uri, true, true, SELECTION_MILLIS)) {
            ReportRunner.connect(client);
            MongoCollection<Document> items = client.getDatabase(new ConnectionString(uri).getDatabase()).getCollection(COLLECTION);
            try {
                run(items, operation);
                return "ok";
            } catch (MongoException e) {
                return e.getClass().getSimpleName() + (e.getCode() > 0 ? " " + e.getCode() : "");
            }
        }
    }

    private static void run(MongoCollection<Document> items, String operation) {
        switch (operation) {
            case "insert" -> items.insertOne(new Document("spec", operation));
            case "insertW0" -> items.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("spec", operation));
            case "find" -> items.find(Filters.eq("_id", 1)).first();
            case "getMore" -> {
                try (MongoCursor<Document> cursor = items.find().batchSize(2).iterator()) {
                    cursor.forEachRemaining(d -> { });
                }
            }
            case "updateMany" -> items.updateMany(Filters.empty(), Updates.set("touched", true));
            case "deleteMany" -> items.deleteMany(Filters.gt("_id", 3));
            default -> throw new IllegalArgumentException("unknown spec operation " + operation);
        }
    }
}
