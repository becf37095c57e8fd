package io.blackpipe.fault;

import org.bson.BsonDocument;
import org.bson.BsonString;

/**
 * One fault rule: which commands (matcher), when (mode), what (action). {@code source} is the
 * failCommand-style document it was parsed from, echoed back by listings.
 */
public record Rule(String id, Matcher matcher, Mode mode, FaultAction action, BsonDocument source) {
    /**
     * The source with its "id", as listings show a rule: one added without an id (over the admin API,
     * by a scenario, by an app's configureFailPoint) has it only here, and removeRule needs it.
     */
    public BsonDocument document() {
        BsonDocument document = source.clone();
        document.put("id", new BsonString(id));
        return document;
    }
}
