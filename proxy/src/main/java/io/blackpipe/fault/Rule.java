package io.blackpipe.fault;

import java.util.List;
import java.util.TreeSet;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * One fault rule: which commands (matcher), when (mode), what (action). {@code source} is the
 * failCommand-style document it was parsed from, echoed back by listings.
 */
public record Rule(String id, Matcher matcher, Mode mode, FaultAction action, BsonDocument source) {
    /** The fields of a rule's data a log line names after its fault: what the fault sends, or how long it holds. */
    private static final List<String> DETAILS = List.of("errorCode", "error", "errorLabels", "writeConcernError", "blockTimeMS",
            "delayReplyMS", "truncateReplyBytes");
    /**
     * The source with its "id", as listings show a rule: one added without an id (over the admin API,
     * by a scenario, by an app's configureFailPoint) has it only here, and removeRule needs it.
     */
    public BsonDocument document() {
        BsonDocument document = source.clone();
        document.put("id", new BsonString(id));
        return document;
    }

    /**
     * What the rule does, for a log line: the fault, the commands it applies to and the rest of its matcher, its mode:
     * "closeConnection on insert, update for app shop (mode alwaysOn)", "errorReply errorCode 91 on find (mode {times: 1})".
     * The command documents it may match are left out.
     */
    public String summary() {
        StringBuilder said = new StringBuilder(action.name());
        BsonDocument data = source.isDocument("data") ? source.getDocument("data") : new BsonDocument();
        for (String detail : DETAILS) { // two rules that differ by their code alone logged alike
            if (data.containsKey(detail)) {
                said.append(' ').append(detail).append(' ').append(json(data.get(detail)));
            }
        }
        said.append(" on ");
        if (matcher.allCommands()) {
            said.append("every command").append(matcher.allBut().isEmpty() ? "" : " but " + String.join(", ", new TreeSet<>(matcher.allBut())));
        } else {
            said.append(String.join(", ", new TreeSet<>(matcher.commands())));
        }
        said.append(matcher.appName() == null ? "" : " for app " + matcher.appName())
                .append(matcher.namespace() == null ? "" : " in " + matcher.namespace())
                .append(matcher.member() == null ? "" : " on member " + matcher.member())
                .append(matcher.attempt() == null ? "" : " (" + matcher.attempt() + " attempts only)");
        return said.append(" (mode ").append(mode.describe()).append(')').toString();
    }

    /** A value of the rule's data as its JSON says it: 91, "NotWritablePrimary", ["RetryableWriteError"]. */
    private static String json(BsonValue value) {
        String wrapped = new BsonDocument("v", value).toJson();
        return wrapped.substring("{\"v\": ".length(), wrapped.length() - 1);
    }
}
