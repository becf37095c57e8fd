package io.blackpipe.report;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.WriteConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import io.blackpipe.fault.ErrorCodes;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * A driver-spec auditor's non-compliant {@code --driver-cmd} program: the driver's own retries off
 * ({@code retryWrites(false)}, {@code retryReads(false)}), and the application re-sending the
 * operation once on a network error, a code of the specs' lists or a RetryableWriteError label.
 * Its attempts count as a driver's retries do; its re-sent write carries no txnNumber.
 *
 * <p>Run as {@code ResendingSpecDriver [--txn-on-w0] URI OPERATION}: with {@code --txn-on-w0} its w:0
 * insert is a raw insert command that carries a txnNumber, which the spec forbids, and is not re-sent.
 */
public final class ResendingSpecDriver {
    private ResendingSpecDriver() {
    }

    public static void main(String[] args) {
        boolean txnOnW0 = args[0].equals("--txn-on-w0");
        String uri = args[txnOnW0 ? 1 : 0];
        String operation = args[txnOnW0 ? 2 : 1];
        MongoClientSettings settings = MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri))
                .retryWrites(false).retryReads(false)
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS)).build();
        try (MongoClient client = MongoClients.create(settings)) {
            MongoDatabase database = client.getDatabase(new ConnectionString(uri).getDatabase());
            try {
                run(client, database, operation, txnOnW0);
                System.out.println("ok");
            } catch (MongoException first) {
                if (txnOnW0 || !resendable(first)) { // a w:0 write's error is not one its application would see
                    System.out.println(first.getClass().getSimpleName() + " " + first.getCode());
                    System.exit(1);
                }
                try {
                    run(client, database, operation, txnOnW0); // the application's own retry: a new command
                    System.out.println("ok after a re-send");
                } catch (MongoException again) {
                    System.out.println(again.getClass().getSimpleName() + " " + again.getCode());
                    System.exit(1);
                }
            }
        }
    }

    private static boolean resendable(MongoException e) {
        return e instanceof MongoSocketException || e.hasErrorLabel("RetryableWriteError")
                || ErrorCodes.RETRYABLE_WRITE.contains(e.getCode()) || ErrorCodes.RETRYABLE_READ.contains(e.getCode());
    }

    private static void run(MongoClient client, MongoDatabase database, String operation, boolean txnOnW0) {
        MongoCollection<Document> items = database.getCollection(SpecDriver.COLLECTION);
        switch (operation) {
            case "insert" -> items.insertOne(new Document("spec", operation));
            case "find" -> items.find(Filters.eq("_id", 1)).first();
            case "insertW0" -> {
                if (!txnOnW0) {
                    items.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("spec", operation));
                    return;
                }
                try (ClientSession session = client.startSession()) {
                    database.runCommand(session, new Document("insert", SpecDriver.COLLECTION)
                            .append("documents", List.of(new Document("spec", operation)))
                            .append("writeConcern", new Document("w", 0)).append("txnNumber", 1L));
                }
            }
            default -> throw new IllegalArgumentException("this program does not run " + operation);
        }
    }
}
