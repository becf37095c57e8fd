package io.blackpipe.report;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.bson.types.ObjectId;

/**
 * Ian's counter from the article: updateOne({_id: day}, {$inc: {counter: 1}}, upsert), and the
 * two idempotent steps that replace it (add a pending token, then increment and remove the token
 * in one update). Where the server lacks $pull (jongodb) the token is a field set and unset.
 *
 * <p>Each increment runs in its own explicit session and carries its number as the command's
 * comment, so the proxy can tell an application's retry (the same command in the same session
 * after a failure) from the next increment, which would otherwise be byte for byte the same
 * command, often in the same pooled session.
 */
final class CounterWorkload {
    static final String DAY = "2016-06-28";

    private final MongoCollection<Document> counters;
    private final boolean tokensInArray;
    private final String operation;
    private final ClientSession session;

    CounterWorkload(MongoCollection<Document> counters, boolean tokensInArray) {
        this(counters, tokensInArray, "increment", null);
    }

    private CounterWorkload(MongoCollection<Document> counters, boolean tokensInArray, String operation, ClientSession session) {
        this.counters = counters;
        this.tokensInArray = tokensInArray;
        this.operation = operation;
        this.session = session;
    }

    /** The same counter for increment number {@code number}, its commands sent in {@code session}. */
    CounterWorkload operation(int number, ClientSession session) {
        return new CounterWorkload(counters, tokensInArray, "increment " + number, session);
    }

    private void update(Bson filter, Bson update, UpdateOptions options) {
        if (session == null) {
            counters.updateOne(filter, update, options.comment(operation));
        } else {
            counters.updateOne(session, filter, update, options.comment(operation));
        }
    }

    /** The original, non-idempotent increment. */
    void increment() {
        update(eq("_id", DAY), Updates.inc("counter", 1), new UpdateOptions().upsert(true));
    }

    /** Step one: remember a pending token (idempotent). */
    void addToken(ObjectId token) {
        update(eq("_id", DAY), tokensInArray ? Updates.addToSet("pending", token)
                : Updates.set("pending." + token.toHexString(), true), new UpdateOptions().upsert(true));
    }

    /** Step two: increment and drop the token in one update; a repeat finds no token and does nothing. */
    void applyToken(ObjectId token) {
        if (tokensInArray) {
            update(and(eq("_id", DAY), eq("pending", token)),
                    Updates.combine(Updates.inc("counter", 1), Updates.pull("pending", token)), new UpdateOptions());
        } else {
            String field = "pending." + token.toHexString();
            update(and(eq("_id", DAY), eq(field, true)),
                    Updates.combine(Updates.inc("counter", 1), Updates.unset(field)), new UpdateOptions());
        }
    }
}
