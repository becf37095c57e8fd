package io.blackpipe.cli;

import io.blackpipe.fault.ErrorCodes;
import io.blackpipe.fault.JsonDocuments;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.json.JsonParseException;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * `fault add`'s flags that say what a rule does (its action, and a block before it), apart from
 * those that say which commands and when: checked together, and written into the rule's data.
 */
final class FaultActionFlags {
    /** What the server's own labels look like (RetryableWriteError), and made-up ones too: no brackets, quotes or spaces. */
    private static final Pattern LABEL_NAME = Pattern.compile("[A-Za-z0-9_.-]+");
    private static final String LABEL_HINT = " (labels are names such as RetryableWriteError; --no-labels sends none)";

    @Option(names = "--error", paramLabel = "NAME", description = "Reply with this server error, by name (e.g. NotWritablePrimary).")
    String error;

    @Option(names = "--error-code", paramLabel = "CODE", description = "Reply with this server error code (e.g. 10107);"
            + " 0 is OK, as on mongod: the rule fires and the command runs.")
    Integer errorCode;

    @Option(names = "--labels", paramLabel = "LABEL", split = ",",
            description = "errorLabels of the error reply (e.g. RetryableWriteError); with --error or --error-code.")
    List<String> labels;

    @Option(names = "--no-labels", description = "Send the error reply with no errorLabels (errorLabels: []), not those"
            + " the server would add: a NotWritablePrimary the driver then does not retry.")
    boolean noLabels;

    @Option(names = "--extra-info", paramLabel = "JSON",
            description = "Fields the error reply carries after codeName, for a code whose errors have them (errorExtraInfo),"
                    + " e.g. --error-code 11000 --extra-info '{\"keyPattern\": {\"sku\": 1}, \"keyValue\": {\"sku\": \"A1\"}}'.")
    String extraInfo;

    @Option(names = "--write-concern-error", paramLabel = "CODE",
            description = "Let the write run and add a writeConcernError of this code to its reply (64: WriteConcernFailed, as"
                    + " when replication timed out; 10107 or 91: the primary stepped down or shuts down after applying it).")
    Integer writeConcernError;

    @Option(names = "--reset", description = "Reset the connection (TCP RST) before the server sees the command.")
    boolean reset;

    @Option(names = "--close", description = "Close the connection before the server sees the command.")
    boolean close;

    @Option(names = "--drop-reply", description = "Let the command run, then drop its reply and reset the connection (TCP RST).")
    boolean dropReply;

    @Option(names = "--truncate", paramLabel = "BYTES", converter = ByteCountConverter.class,
            description = "Let the command run, send the first BYTES of its reply (all but its last byte when it is no longer),"
                    + " then close the connection (FIN): truncateReplyBytes.")
    Long truncate;

    @Option(names = "--hang", description = "Never answer (until the client gives up).")
    boolean hang;

    @Option(names = "--delay", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Let the command run and hold its reply this long (500ms, 2s): delayReplyMS.")
    Long delay;

    @Option(names = "--jitter", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "With --delay: hold each reply for a time drawn evenly from DELAY - JITTER to DELAY + JITTER"
                    + " (never below 0; seeded, see the proxy's --seed): delayReplyJitterMS.")
    Long jitter;

    @Option(names = "--trickle", paramLabel = "BYTES/INTERVAL", converter = TrickleConverter.class,
            description = "Let the command run and send its reply in pieces of BYTES, the first at once and one more every"
                    + " INTERVAL (64/250ms): trickleReplyBytes + trickleReplyIntervalMS.")
    TrickleConverter.Trickle trickle;

    @Option(names = "--reply", paramLabel = "JSON",
            description = "Answer with this reply, sent as given, instead of forwarding (cannedReply), e.g."
                    + " '{\"ok\": 1, \"n\": 0, \"writeErrors\": [{\"index\": 0, \"code\": 11000, \"errmsg\": \"E11000 duplicate key\"}]}'.")
    String reply;

    @Option(names = "--block", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Hold the command this long before acting (blockConnection + blockTimeMS).")
    Long block;

    /** The flags of this group that were given. */
    List<String> given() {
        List<String> given = actions();
        add(given, labels != null && !labels.isEmpty(), "--labels");
        add(given, noLabels, "--no-labels");
        add(given, extraInfo != null, "--extra-info");
        add(given, jitter != null, "--jitter");
        add(given, block != null, "--block");
        return given;
    }

    /** The action flags given (--block is not one: it wraps one). */
    private List<String> actions() {
        List<String> given = new ArrayList<>();
        add(given, error != null, "--error");
        add(given, errorCode != null, "--error-code");
        add(given, writeConcernError != null, "--write-concern-error");
        add(given, reset, "--reset");
        add(given, close, "--close");
        add(given, dropReply, "--drop-reply");
        add(given, truncate != null, "--truncate");
        add(given, hang, "--hang");
        add(given, delay != null, "--delay");
        add(given, trickle != null, "--trickle");
        add(given, reply != null, "--reply");
        return given;
    }

    /** Adds {@code flag} to {@code list} when it was given. */
    static void add(List<String> list, boolean given, String flag) {
        if (given) {
            list.add(flag);
        }
    }

    /** Combinations that make no rule: one action at most (with --block, or --block alone), and what needs another flag. */
    void check(Function<String, ParameterException> usage) {
        if (error != null && errorCode != null) {
            throw usage.apply("--error and --error-code both name the error; give one of them");
        }
        List<String> actions = actions();
        if (actions.size() > 1) {
            throw usage.apply(String.join(" and ", actions) + " are two actions; a rule has one (--block may be combined with one of them)");
        }
        if (jitter != null && delay == null) {
            throw usage.apply("--jitter varies a --delay: give --delay too (e.g. --delay 200ms --jitter 50ms)");
        }
        if (actions.isEmpty() && block == null) {
            throw usage.apply("no action: give one of --error, --error-code, --write-concern-error, --reset, --close, --drop-reply,"
                    + " --truncate, --hang, --delay, --trickle, --reply or --block");
        }
        boolean anError = error != null || errorCode != null || writeConcernError != null;
        if (labels != null && !labels.isEmpty() && !anError) {
            throw usage.apply("--labels needs --error, --error-code or --write-concern-error (labels belong to an error)");
        }
        if (noLabels && !anError) {
            throw usage.apply("--no-labels needs --error, --error-code or --write-concern-error (labels belong to an error)");
        }
        if (noLabels && labels != null && !labels.isEmpty()) {
            throw usage.apply("--labels and --no-labels: give one of them");
        }
        for (String label : labels == null ? List.<String>of() : labels) {
            String name = label.strip();
            if (name.isEmpty()) { // `--labels "$LABEL"` with LABEL unset: not dropped, which would have sent errorLabels: []
                throw usage.apply("--labels: an error label must not be empty, got ''" + LABEL_HINT);
            }
            if (!LABEL_NAME.matcher(name).matches()) { // `--labels '[]'` went out as one label named "[]"
                throw usage.apply("--labels: '" + name + "' is not an error label" + LABEL_HINT);
            }
        }
        if (extraInfo != null && error == null && errorCode == null) {
            throw usage.apply("--extra-info needs --error or --error-code (it completes an error reply)");
        }
    }

    /** Writes the action's fields into the rule's {@code data}. */
    void putInto(BsonDocument data, Function<String, ParameterException> usage) {
        if (error != null) {
            if (error.matches("-?[0-9]+")) {
                try {
                    data.put("errorCode", new BsonInt32(Integer.parseInt(error)));
                } catch (NumberFormatException e) {
                    throw usage.apply("--error " + error + " is out of range: an error code is a 32-bit integer");
                }
            } else if (ErrorCodes.code(error) == null) {
                throw usage.apply("--error '" + error + "' is not an error name blackpipe knows; known: "
                        + new TreeSet<>(ErrorCodes.presets().keySet()) + " (or use --error-code N)");
            } else {
                data.put("error", new BsonString(error));
            }
        }
        if (errorCode != null) {
            data.put("errorCode", new BsonInt32(errorCode));
        }
        if (writeConcernError != null) {
            data.put("writeConcernError", new BsonDocument("code", new BsonInt32(writeConcernError)));
        }
        if (labels != null && !labels.isEmpty()) {
            BsonArray array = new BsonArray();
            labels.stream().map(String::strip).forEach(l -> array.add(new BsonString(l)));
            data.put("errorLabels", array);
        }
        if (noLabels) {
            data.put("errorLabels", new BsonArray());
        }
        if (extraInfo != null) {
            data.put("errorExtraInfo", json("--extra-info", extraInfo, usage));
        }
        putFlag(data, "resetConnection", reset);
        putFlag(data, "closeConnection", close);
        putFlag(data, "dropReply", dropReply);
        if (truncate != null) {
            data.put("truncateReplyBytes", JsonDocuments.integer(truncate));
        }
        putFlag(data, "hang", hang);
        if (delay != null) {
            data.put("delayReplyMS", JsonDocuments.integer(delay));
        }
        if (jitter != null) {
            data.put("delayReplyJitterMS", JsonDocuments.integer(jitter));
        }
        if (trickle != null) {
            data.put("trickleReplyBytes", JsonDocuments.integer(trickle.bytes()));
            data.put("trickleReplyIntervalMS", JsonDocuments.integer(trickle.intervalMillis()));
        }
        if (reply != null) {
            data.put("cannedReply", json("--reply", reply, usage));
        }
        if (block != null) {
            data.put("blockConnection", BsonBoolean.TRUE);
            data.put("blockTimeMS", JsonDocuments.integer(block));
        }
    }

    private static BsonDocument json(String flag, String text, Function<String, ParameterException> usage) {
        try {
            return JsonDocuments.parseOne(text);
        } catch (JsonParseException | org.bson.BsonInvalidOperationException e) {
            throw usage.apply(flag + ": not a JSON document: " + e.getMessage());
        }
    }

    private static void putFlag(BsonDocument data, String key, boolean on) {
        if (on) {
            data.put(key, BsonBoolean.TRUE);
        }
    }

    /** The flag that set this field of the rule's data, so an error names what the user typed; else the field itself. */
    String flag(String field) {
        return switch (field) {
            case "data.error" -> "--error";
            case "data.errorCode" -> error != null ? "--error" : "--error-code";
            case "data.errorLabels" -> "--labels";
            case "data.errorExtraInfo" -> "--extra-info";
            case "data.resetConnection" -> "--reset";
            case "data.closeConnection" -> "--close";
            case "data.dropReply" -> "--drop-reply";
            case "data.truncateReplyBytes" -> "--truncate";
            case "data.hang" -> "--hang";
            case "data.delayReplyMS" -> "--delay";
            case "data.delayReplyJitterMS" -> "--jitter";
            case "data.trickleReplyBytes", "data.trickleReplyIntervalMS" -> "--trickle";
            case "data.cannedReply", "data.cannedReply.ok" -> "--reply";
            case "data.blockConnection", "data.blockTimeMS" -> "--block";
            default -> field;
        };
    }
}
