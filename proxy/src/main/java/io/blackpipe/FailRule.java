package io.blackpipe;

import io.blackpipe.fault.JsonDocuments;
import java.time.Duration;
import java.util.Arrays;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.conversions.Bson;

/**
 * A failCommand rule written fluently; the last call says what happens and adds the rule:
 * <pre>{@code
 * blackPipe.fail("insert").times(1).with(Fault.RESET);
 * blackPipe.fail("find", "aggregate").onMember("primary").error("NotWritablePrimary");
 * blackPipe.fail("update").probability(0.1).delay(Duration.ofMillis(500));
 * blackPipe.fail("insert").times(1).cannedReply(BsonDocument.parse("{ok: 1, n: 0, writeErrors: [...]}"));
 * blackPipe.fail("find").times(1).trickleReply(256, Duration.ofMillis(100));
 * blackPipe.fail("insert").times(1).truncateReply(20);
 * blackPipe.fail("update").whereCommand(BsonDocument.parse("{'updates.q._id': 42}")).with(Fault.DROP_REPLY);
 * }</pre>
 * The mode is alwaysOn unless times, skip or probability say otherwise. Each terminal method
 * returns the rule's id, for {@link BlackPipe#removeRule(String)} (or {@link RemoteBlackPipe#removeRule(String)}:
 * a running proxy's {@code fail(...)} builds the same rules).
 */
public final class FailRule {
    /** Where the rule goes when its last call adds it: a proxy in this JVM, or a running one over its admin API. */
    interface Target {
        /** Adds the rule, replacing one with the same id; {@code id} null: the target names it. Returns the id. */
        String add(String id, BsonDocument failCommand);
    }

    private final Target target;
    private final BsonDocument data = new BsonDocument();
    private BsonValue mode = new BsonString("alwaysOn");
    /** The call that set the mode, e.g. "times(1)"; null while it is alwaysOn by default. */
    private String modeSetBy;
    private String id;
    /** The id of the rule this builder added; a builder adds one rule. */
    private String added;

    FailRule(Target target, String... commands) {
        if (commands == null || commands.length == 0) {
            throw new IllegalArgumentException("fail(): name at least one command, e.g. fail(\"insert\"), or use failAll()");
        }
        this.target = target;
        BsonArray names = new BsonArray();
        Arrays.stream(commands).map(name -> new BsonString(given(name, "fail(): a command name"))).forEach(names::add);
        data.put("failCommands", names);
    }

    private FailRule(Target target) {
        this.target = target;
        data.put("failAllCommands", BsonBoolean.TRUE);
    }

    static FailRule onAllCommands(Target target) {
        return new FailRule(target);
    }

    /** Fire for the next {@code n} matching attempts (at least 1), then stop. */
    public FailRule times(int n) {
        if (n < 1) { // how many times it fires, as the CLI's --times: {times: 0}, which fires once, is for a JSON rule
            throw new IllegalArgumentException("times(): must be at least 1, got " + n + (n == 0 ? " ({times: 0} fires once, as on the server)" : ""));
        }
        return mode("times(" + n + ")", new BsonDocument("times", new BsonInt32(n)));
    }

    /** Let the next {@code n} matching attempts pass, then fire on every one. */
    public FailRule skip(int n) {
        return mode("skip(" + n + ")", new BsonDocument("skip", new BsonInt32(n)));
    }

    /** Fire on each matching attempt with probability {@code p} (seeded: see {@link BlackPipeBuilder#seed}). */
    public FailRule probability(double p) {
        return mode("probability(" + p + ")", new BsonDocument("activationProbability", new BsonDouble(p)));
    }

    /** One mode per rule, as failCommand takes it (and the CLI's fault add): a second would silently replace the first. */
    private FailRule mode(String call, BsonValue chosen) {
        unspent(call);
        if (modeSetBy != null) {
            throw new IllegalStateException(call + ": this rule's mode is already " + modeSetBy + "; a rule has one mode");
        }
        modeSetBy = call;
        mode = chosen;
        return this;
    }

    /**
     * Only on this member: "primary", "secondary" or an advertised or upstream host:port. One the proxy does not
     * front (a typo; "secondary" with no secondary) is refused when the rule is added, naming those it does.
     */
    public FailRule onMember(String member) {
        return put("onMember", "member", member);
    }

    /**
     * Only for clients whose appName is {@code appName}; "" (as on mongod): only clients that send none. Each
     * client names itself, so any name is taken (a typo matches no client).
     */
    public FailRule forApp(String appName) {
        return put("forApp", "appName", appName);
    }

    /** Only on this namespace ("db.collection", or "db" for every collection of it). */
    public FailRule onNamespace(String namespace) {
        if (namespace != null && namespace.isBlank()) {
            // as the CLI's --namespace refuses it: a failCommand namespace "" never matches, the rule would never fire
            throw new IllegalArgumentException("onNamespace(): must not be empty: a rule on namespace '" + namespace
                    + "' would never fire (give \"db.collection\" or \"db\", or leave it out for every namespace)");
        }
        return put("onNamespace", "namespace", namespace);
    }

    /**
     * Only on commands that hold these fields, by dotted path into the command as the server reads it, e.g.
     * {@code whereCommand(new BsonDocument("documents.sku", new BsonString("A1")))} for the insert of that
     * document alone, or {@code "updates.q._id"} for one update's filter. Read as a query reads a filter:
     * values by equality (numbers by value, a path through an array looks into its elements), or field
     * operators such as {@code {"documents.qty": {"$gte": 100}}} ($eq, $ne, $gt, $gte, $lt, $lte, $in,
     * $nin, $all, $exists, $type, $size, $mod, $regex, $elemMatch, $not, $bitsAllSet and the other bit
     * tests), joined by $and, $or and $nor;
     * others ($expr, $where, geospatial ones) are refused. The driver's {@code Filters} write the same
     * thing: {@code whereCommand(Filters.elemMatch("documents", Filters.gte("qty", 100)))}.
     */
    public FailRule whereCommand(Bson fields) {
        unspent("whereCommand");
        given(fields, "whereCommand(): the fields");
        if (data.containsKey("commandMatches")) {
            throw new IllegalStateException("whereCommand(): this rule's commandMatches is already "
                    + data.getDocument("commandMatches").toJson() + "; give every field in one call");
        }
        BsonDocument document;
        try {
            document = UsersCodecs.toDocument(fields);
        } catch (CodecConfigurationException e) {
            throw new IllegalArgumentException("whereCommand(): the fields hold a value BSON cannot encode: " + e.getMessage(), e);
        }
        data.put("commandMatches", document.clone());
        return this;
    }

    /** Only on first attempts (a retry passes). */
    public FailRule firstAttempts() {
        return put("firstAttempts", "attempt", "first");
    }

    /** Only on attempts the proxy recognises as retries. */
    public FailRule retries() {
        return put("retries", "attempt", "retry");
    }

    /**
     * Hold the command for {@code block} before the action (failCommand's blockConnection + blockTimeMS, at least
     * 1 ms): with {@code errorCode(0)} the command then runs, late; with an error or a closed connection it never runs.
     */
    public FailRule blockConnection(Duration block) {
        unspent("blockConnection");
        if (data.containsKey("blockConnection")) {
            throw new IllegalStateException("blockConnection(): this rule already blocks for " + data.get("blockTimeMS") + " ms");
        }
        if (Arguments.required(block, "blockConnection(): the block").compareTo(Duration.ofMillis(1)) < 0) {
            // under 1 ms, blockTimeMS would be 0: no block at all
            throw new IllegalArgumentException("blockConnection(): must be at least 1ms, got " + block);
        }
        data.put("blockConnection", BsonBoolean.TRUE);
        data.put("blockTimeMS", JsonDocuments.integer(Arguments.toMillis(block, "blockConnection(): the block")));
        return this;
    }

    /**
     * The error this rule answers carries no labels (failCommand's {@code errorLabels: []}, {@code fault add --no-labels}),
     * where the proxy gives it those a server adds: a NotWritablePrimary without RetryableWriteError, which a driver
     * does not retry. For {@code error}, {@code errorCode} (which then take no labels of their own) and {@code
     * writeConcernError} (a writeConcernError without RetryableWriteError); the other actions carry no error to label.
     */
    public FailRule withoutErrorLabels() {
        unspent("withoutErrorLabels");
        if (data.containsKey("errorLabels")) {
            throw new IllegalStateException("withoutErrorLabels(): called already on this rule");
        }
        data.put("errorLabels", new BsonArray());
        return this;
    }

    /** Name the rule (default: rule-N); a rule with the same id is replaced. */
    public FailRule id(String ruleId) {
        unspent("id");
        if (id != null) { // as every other setter refuses a second call: the first id would be lost without a word
            throw new IllegalStateException("id(): this rule's id is already '" + id + "'; a rule has one id");
        }
        this.id = ruleId;
        return this;
    }

    /** Adds the rule: a connection-level fault. */
    public String with(Fault fault) {
        unspent("with");
        return add(new BsonDocument(given(fault, "with(): the fault").label(), BsonBoolean.TRUE));
    }

    /** Adds the rule: an error reply with a named code, e.g. "NotWritablePrimary", with optional error labels. */
    public String error(String codeName, String... errorLabels) {
        unspent("error");
        BsonDocument action = new BsonDocument("error", new BsonString(given(codeName, "error(): the code name")));
        return add(withLabels(action, "error()", errorLabels));
    }

    /**
     * Adds the rule: an error reply with a numeric code. Code 0 is OK, no error: as mongod's failCommand, such a
     * rule fires (its fired count grows, a times(n) is spent) and the command runs as sent.
     */
    public String errorCode(int code, String... errorLabels) {
        unspent("errorCode");
        return add(withLabels(new BsonDocument("errorCode", new BsonInt32(code)), "errorCode()", errorLabels));
    }

    /**
     * Adds the rule: an error reply with a numeric code and the extra information its errors carry after
     * codeName (failCommand's errorExtraInfo), e.g. 11000 with {@code {keyPattern: {sku: 1}, keyValue: {sku: "A1"}}}.
     */
    public String errorCode(int code, BsonDocument extraInfo, String... errorLabels) {
        unspent("errorCode");
        BsonDocument action = new BsonDocument("errorCode", new BsonInt32(code))
                .append("errorExtraInfo", given(extraInfo, "errorCode(): the extra information").clone());
        return add(withLabels(action, "errorCode()", errorLabels));
    }

    /**
     * Adds the rule: the command runs and its reply carries a writeConcernError of {@code code} (e.g. 64
     * WriteConcernFailed, 91 ShutdownInProgress, which drivers retry); only commands that take a write concern get it.
     */
    public String writeConcernError(int code, String errmsg) {
        unspent("writeConcernError");
        return add(new BsonDocument("writeConcernError", new BsonDocument("code", new BsonInt32(code))
                .append("errmsg", new BsonString(given(errmsg, "writeConcernError(): the errmsg")))));
    }

    /** Adds the rule: the command runs, its reply is held for {@code delay} (at least 1 ms; the rule counts whole ms). */
    public String delay(Duration delay) {
        unspent("delay");
        return add(new BsonDocument("delayReplyMS", JsonDocuments.integer(delayMillis(delay))));
    }

    private static long delayMillis(Duration delay) {
        if (delay == null || delay.compareTo(Duration.ofMillis(1)) < 0) {
            // under 1 ms, delayReplyMS would silently be 0: no delay at all
            throw new IllegalArgumentException("delay: must be at least 1ms, got " + delay);
        }
        return Arguments.toMillis(delay, "delay");
    }

    /**
     * Adds the rule: the command runs, its reply is held for a time drawn evenly from {@code delay -
     * jitter} to {@code delay + jitter} (never below 0; seeded: see {@link BlackPipeBuilder#seed}), a new
     * draw for each command: a network whose latency varies. Both in whole ms, the delay at least 1 ms.
     */
    public String delay(Duration delay, Duration jitter) {
        unspent("delay");
        if (Arguments.required(jitter, "delay(): the jitter").isNegative()
                || (!jitter.isZero() && jitter.compareTo(Duration.ofMillis(1)) < 0)) {
            // under 1 ms, delayReplyJitterMS would silently be 0: no jitter at all
            throw new IllegalArgumentException("delay(): the jitter must be 0 or at least 1ms, got " + jitter);
        }
        return add(new BsonDocument("delayReplyMS", JsonDocuments.integer(delayMillis(delay)))
                .append("delayReplyJitterMS", JsonDocuments.integer(Arguments.toMillis(jitter, "delay(): the jitter"))));
    }

    /**
     * Adds the rule: answer with {@code reply}, sent exactly as given, instead of forwarding (the
     * member never sees the command). For replies errorCode cannot shape, e.g. a duplicate key in
     * {@code writeErrors} or an error's {@code errInfo}; it needs a numeric {@code ok}.
     */
    public String cannedReply(BsonDocument reply) {
        unspent("cannedReply");
        if (!given(reply, "cannedReply(): the reply").isNumber("ok")) {
            // drivers read ok first; say it in the caller's terms, not the rule field's
            throw new IllegalArgumentException("cannedReply(): the reply needs a numeric ok (1, or 0 with code, codeName and errmsg), got "
                    + reply.toJson());
        }
        return add(new BsonDocument("cannedReply", reply.clone()));
    }

    /**
     * Adds the rule: the command runs, its reply goes out in pieces of {@code bytesPerPiece} bytes, the
     * first at once and one more every {@code interval} (at least 1 ms; the rule counts whole ms).
     * Each read of the client gets bytes well within its socketTimeoutMS, however long the whole reply
     * takes; only an operation timeout (the driver's timeoutMS) ends the wait.
     */
    public String trickleReply(int bytesPerPiece, Duration interval) {
        unspent("trickleReply");
        if (bytesPerPiece < 1) {
            throw new IllegalArgumentException("trickleReply(): bytesPerPiece must be at least 1, got " + bytesPerPiece);
        }
        if (Arguments.required(interval, "trickleReply(): the interval").compareTo(Duration.ofMillis(1)) < 0) {
            // under 1 ms, trickleReplyIntervalMS would be 0, which the rule refuses: say so in the caller's terms
            throw new IllegalArgumentException("trickleReply(): the interval must be at least 1ms, got " + interval);
        }
        return add(new BsonDocument("trickleReplyBytes", new BsonInt32(bytesPerPiece))
                .append("trickleReplyIntervalMS", JsonDocuments.integer(Arguments.toMillis(interval, "trickleReply(): the interval"))));
    }

    /**
     * Adds the rule: the command runs, the client gets the first {@code bytes} bytes of its reply (all but the last
     * when the reply is no longer, so it is always cut) and then the connection closes (FIN): Toxiproxy's limit_data,
     * for one command. The driver reads "Prematurely reached end of stream" for a command that ran.
     */
    public String truncateReply(int bytes) {
        unspent("truncateReply");
        if (bytes < 1) {
            throw new IllegalArgumentException("truncateReply(): bytes must be at least 1, got " + bytes);
        }
        return add(new BsonDocument("truncateReplyBytes", new BsonInt32(bytes)));
    }

    private BsonDocument withLabels(BsonDocument action, String call, String... errorLabels) {
        if (errorLabels.length > 0) {
            if (data.containsKey("errorLabels")) {
                throw new IllegalStateException(call + ": labels " + Arrays.toString(errorLabels) + " given to a rule whose"
                        + " withoutErrorLabels() said it carries none");
            }
            BsonArray labels = new BsonArray();
            for (String label : errorLabels) {
                if (given(label, call + ": an error label").isBlank()) {
                    throw new IllegalArgumentException(call + ": an error label must not be empty, got '" + label
                            + "' (labels are names such as RetryableWriteError)");
                }
                labels.add(new BsonString(label));
            }
            action.put("errorLabels", labels);
        }
        return action;
    }

    /** Each filter once, as the mode: a second onMember (or retries() after firstAttempts()) would silently replace the first. */
    private FailRule put(String call, String key, String value) {
        unspent(call);
        BsonString chosen = new BsonString(given(value, key));
        if (data.containsKey(key)) {
            throw new IllegalStateException(call + "(): this rule's " + key + " is already '" + data.getString(key).getValue()
                    + "'; a rule has one (a second rule can take '" + value + "')");
        }
        data.put(key, chosen);
        return this;
    }

    /** Null named, rather than BSON's "Value can not be null" or an NPE. */
    private static <T> T given(T value, String what) {
        if (value == null) {
            throw new IllegalArgumentException(what + ": required, got null");
        }
        return value;
    }

    /**
     * A builder adds one rule: called again, it would add a second carrying the first's action too
     * (with(RESET) then error(...) made an error rule that resets, as a reset wins over an error).
     */
    private void unspent(String call) {
        if (added != null) {
            throw new IllegalStateException((call.endsWith(")") ? call : call + "()") + ": this FailRule already added rule '" + added
                    + "'; start another with fail(...) or failAll()");
        }
    }

    /**
     * Adds the rule: the filters so far plus {@code action}. The builder keeps only the filters, so a
     * terminal call that was refused (a bad label, a member the proxy does not front) leaves nothing
     * of its action behind for the next terminal call to carry.
     */
    private String add(BsonDocument action) {
        BsonDocument ruleData = data.clone();
        ruleData.putAll(action);
        BsonDocument document = new BsonDocument("configureFailPoint", new BsonString("failCommand"))
                .append("mode", mode)
                .append("data", ruleData);
        added = target.add(id, document);
        return added;
    }
}
