package io.blackpipe.fault;

import io.blackpipe.fault.action.WriteConcernError;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Reads a rule written as MongoDB's failCommand failpoint takes it, plus blackpipe's extensions:
 * {@code {configureFailPoint: "failCommand", mode: ..., data: {...}}}. Anything unknown, missing
 * or of the wrong type is rejected with the field's name; nothing is half-accepted.
 */
public final class RuleParser {
    private static final Set<String> HELLO_NAMES = Set.of("hello", "isMaster", "ismaster");
    /**
     * Commands the server knows by several names: its failCommand matches any of them whichever
     * the rule or the client uses ({@code Command::hasAlias}), and so does a rule here.
     */
    private static final List<Set<String>> ALIASES = List.of(HELLO_NAMES, Set.of("findAndModify", "findandmodify"),
            Set.of("dropIndexes", "deleteIndexes"), Set.of("mapReduce", "mapreduce"), Set.of("buildInfo", "buildinfo"),
            Set.of("dbStats", "dbstats"), Set.of("collStats", "collstats"), Set.of("dataSize", "datasize"));
    /**
     * What happens to a forwarded command's reply, or the reply given in its place: the proxy rewrites
     * hello replies (the addresses drivers connect to), so these do not apply to hello.
     */
    private static final List<String> REPLY_FATES = List.of("dropReply", "truncateReplyBytes", "writeConcernError", "delayReplyMS",
            "delayReplyJitterMS", "trickleReplyBytes", "trickleReplyIntervalMS", "cannedReply");
    /** Percent-encoded, the longest id (4-byte characters: 12 bytes each) still fits the admin API's 4096-byte request line. */
    public static final int MAX_ID_LENGTH = 256;
    private static final Set<String> TOP_LEVEL = Set.of("configureFailPoint", "mode", "data", "id", "$db", "lsid",
            "$clusterTime", "$readPreference");
    private static final Set<String> DATA = Set.of("failCommands", "errorCode", "error", "errorLabels", "closeConnection",
            "blockConnection", "blockTimeMS", "writeConcernError", "appName", "namespace", "failInternalCommands", "failLocalClients", "failAllCommands",
            "resetConnection", "dropReply", "truncateReplyBytes", "hang", "delayReplyMS", "delayReplyJitterMS", "trickleReplyBytes",
            "trickleReplyIntervalMS", "cannedReply", "member", "attempt", "topologyVersion", "errorExtraInfo", "commandMatches");

    /** The server's own fields that a proxy cannot honour, with why: refused, so that no rule silently does less than it says. */
    private static final Map<String, String> SERVER_ONLY = Map.of(
            "threadName", "the server's failpoint matches one of its own threads (conn12); a proxy has none: match by appName or member",
            "tassert", "the server's failpoint raises its error as an internal assertion; a proxy raises none: leave it out");

    private final long seed;
    /** Why a rule's member names none of the deployment's members (naming those it has); null when it names one. */
    private final UnaryOperator<String> unknownMember;
    private final AtomicLong parsed = new AtomicLong();
    /** Held while rules are parsed, so a request's rules take their draws together (a scenario's: up to 1 MiB of YAML). */
    private final ReentrantLock lock = new ReentrantLock();

    /**
     * The rules parsed from now on draw as those of a parser just made: a reset's clean slate replays, so a
     * test run alone decides as it did among others (each rule's generator is the seed plus its place in the
     * sequence of rules parsed).
     */
    public void restartDraws() {
        lock.lock();
        try {
            parsed.set(0);
        } finally {
            lock.unlock();
        }
    }

    /**
     * A parser with no deployment at hand (`scenario validate`, `fault add` checking its flags): a member is
     * checked as a role or host:port only; the proxy the rule goes to checks that it is one of its own.
     *
     * @param seed the base of every random generator ({activationProbability}, a delay's jitter), so runs replay
     */
    public RuleParser(long seed) {
        this(seed, member -> null);
    }

    /**
     * A proxy's parser: a rule's {@code member} must name one of its members, as its deployment faults' must.
     *
     * @param unknownMember why a member ("primary", "secondary" or host:port) names none of the proxy's members,
     *                      naming those it has; null when it names one
     */
    public RuleParser(long seed, UnaryOperator<String> unknownMember) {
        this.seed = seed;
        this.unknownMember = unknownMember;
    }

    /** True for {mode: "off"}: the document removes a rule rather than adding one. */
    public static boolean isOff(BsonDocument document) {
        BsonValue mode = document.get("mode");
        return mode != null && mode.isString() && mode.asString().getValue().equals("off");
    }

    /**
     * @param id the rule's id; the document's own "id", when it has one, must be a non-empty string too
     * @throws RuleException naming the field that is wrong; a refused rule takes no place in the sequence of draws,
     *                        so the rules after it draw as they would without it (a refused request changes nothing)
     */
    public Rule parse(String id, BsonDocument document) {
        return locked(() -> parseChecked(id, document), true);
    }

    /**
     * The same as {@link #parse}, or null at once while another thread parses (a scenario being read): an event loop
     * must not wait for that, as every connection on it would wait too.
     */
    public Rule parseUnlessBusy(String id, BsonDocument document) {
        if (!lock.tryLock()) {
            return null;
        }
        try {
            return drawing(() -> parseChecked(id, document), true);
        } finally {
            lock.unlock();
        }
    }

    /** Work that parses rules, as {@link #parseTogether} and {@link #checkOnly} run it. */
    public interface Parsing<T, E extends Exception> {
        T run() throws E;
    }

    /**
     * Runs {@code reading}, which parses several rules as one request (a scenario's, read and started): refused
     * anywhere, it takes no place in the draws, as a refused rule takes none.
     */
    public <T, E extends Exception> T parseTogether(Parsing<T, E> reading) throws E {
        return locked(reading, true);
    }

    /** Runs {@code reading} as a check alone (a scenario validated, not started): it takes no place in the draws. */
    public <T, E extends Exception> T checkOnly(Parsing<T, E> reading) throws E {
        return locked(reading, false);
    }

    private <T, E extends Exception> T locked(Parsing<T, E> reading, boolean keepTheDraws) throws E {
        lock.lock();
        try {
            return drawing(reading, keepTheDraws);
        } finally {
            lock.unlock();
        }
    }

    private <T, E extends Exception> T drawing(Parsing<T, E> reading, boolean keepTheDraws) throws E {
        long drawsBefore = parsed.get();
        boolean done = false;
        try {
            T read = reading.run();
            done = keepTheDraws;
            return read;
        } finally {
            if (!done) {
                parsed.set(drawsBefore);
            }
        }
    }

    private Rule parseChecked(String id, BsonDocument document) {
        BsonValue ownId = document.get("id");
        if (ownId != null && !ownId.isString()) {
            throw new RuleException("id", "must be a string, got " + ownId.getBsonType().name().toLowerCase(Locale.ROOT));
        }
        if (id == null || id.isBlank() || (ownId != null && ownId.asString().getValue().isBlank())) {
            throw new RuleException("id", "must not be empty");
        }
        int length = id.codePointCount(0, id.length());
        if (length > MAX_ID_LENGTH) { // the API names a rule in its path: a longer one was added, and then out of reach
            throw new RuleException("id", "is " + length + " characters long; at most " + MAX_ID_LENGTH);
        }
        for (String key : document.keySet()) {
            if (!TOP_LEVEL.contains(key)) {
                throw new RuleException(key, "unknown field (expected configureFailPoint, mode, data, id)");
            }
        }
        BsonValue failPoint = document.get("configureFailPoint");
        if (failPoint == null || !failPoint.isString() || !failPoint.asString().getValue().equals("failCommand")) {
            throw new RuleException("configureFailPoint", "must be \"failCommand\"");
        }
        Mode mode = mode(document.get("mode"));
        BsonValue dataValue = document.get("data");
        if (dataValue == null || !dataValue.isDocument()) {
            throw new RuleException("data", "required, a document");
        }
        BsonDocument data = dataValue.asDocument();
        for (String key : data.keySet()) {
            if (SERVER_ONLY.containsKey(key)) {
                throw new RuleException("data." + key, SERVER_ONLY.get(key));
            }
            if (!DATA.contains(key)) {
                throw new RuleException("data." + key, "unknown field");
            }
        }
        boolean allCommands = RuleFields.flag(data, "failAllCommands");
        Set<String> commands = commands(data, allCommands);
        if (!allCommands && commands.contains("hello")) {
            for (String replyFate : REPLY_FATES) {
                if (data.containsKey(replyFate)) {
                    throw new RuleException("data." + replyFate, "hello and isMaster can be failed with errorCode, "
                            + "closeConnection, resetConnection, blockConnection or hang, not with a fate of their reply or one in its place");
                }
            }
        }
        String appName = RuleFields.string(data, "appName");
        String namespace = RuleFields.string(data, "namespace");
        String member = member(data);
        String attempt = attempt(data);
        CommandPattern pattern = data.containsKey("commandMatches") ? CommandPattern.parse("data.commandMatches", data.get("commandMatches")) : null;
        FaultAction action = RuleActions.action(data, () -> seed + parsed.incrementAndGet());
        Matcher matcher;
        if (action instanceof WriteConcernError) {
            Set<String> taking = allCommands ? WriteConcernError.COMMANDS : takingAWriteConcern(commands);
            matcher = new Matcher(taking, appName, namespace, member, attempt, pattern);
        } else if (allCommands) {
            // as on the server, hellos too; but the proxy rewrites their replies, so not with a fate of the reply
            boolean replyFate = REPLY_FATES.stream().anyMatch(data::containsKey);
            matcher = Matcher.allCommandsBut(replyFate ? HELLO_NAMES : Set.of(), appName, namespace, member, attempt, pattern);
        } else {
            matcher = new Matcher(commands, appName, namespace, member, attempt, pattern);
        }
        return new Rule(id, matcher, mode, action, document.clone());
    }

    private Mode mode(BsonValue value) {
        if (value == null) {
            throw new RuleException("mode", "required: \"alwaysOn\", {times: n}, {skip: n} or {activationProbability: p}");
        }
        if (value.isString()) {
            switch (value.asString().getValue()) {
                case "alwaysOn": return Mode.alwaysOn();
                case "off": throw new RuleException("mode", "\"off\" removes a rule; it cannot be added");
                default: throw new RuleException("mode", "unknown mode \"" + value.asString().getValue() + "\"");
            }
        }
        if (!value.isDocument() || value.asDocument().size() != 1) {
            throw new RuleException("mode", "must be a string or a document with one of times, skip, activationProbability");
        }
        BsonDocument mode = value.asDocument();
        String key = mode.getFirstKey();
        switch (key) {
            case "times": return Mode.times(modeCount(mode, "times"));
            case "skip": return Mode.skip(modeCount(mode, "skip"));
            case "activationProbability": {
                BsonValue p = mode.get(key);
                // written so that NaN fails too: it compares false with everything, and would never fire
                if (!p.isNumber() || !(p.asNumber().doubleValue() >= 0 && p.asNumber().doubleValue() <= 1)) {
                    throw new RuleException("mode.activationProbability", "must be a number from 0 to 1");
                }
                return Mode.probability(p.asNumber().doubleValue(), seed + parsed.incrementAndGet());
            }
            default: throw new RuleException("mode." + key, "unknown mode");
        }
    }

    /**
     * times or skip as the server takes them: its failpoint keeps them in an int, so above 2^31-1 it
     * refuses them ("'times' option to 'mode' is too large", BadValue) rather than wrap.
     */
    private static long modeCount(BsonDocument mode, String key) {
        long count = RuleFields.nonNegative(mode, key, "mode." + key);
        if (count > Integer.MAX_VALUE) {
            throw new RuleException("mode." + key, count + " is too large: at most " + Integer.MAX_VALUE
                    + " (2^31-1), as the server takes it");
        }
        return count;
    }

    /** The named commands; none when failAllCommands (which wins over failCommands, as on the server). */
    private static Set<String> commands(BsonDocument data, boolean allCommands) {
        BsonValue value = data.get("failCommands");
        if (allCommands && value == null) {
            return Set.of();
        }
        if (value == null || !value.isArray() || value.asArray().isEmpty()) {
            throw new RuleException("data.failCommands", "required, a non-empty array of command names (or failAllCommands: true)"
                    + RuleFields.got(value));
        }
        Set<String> commands = new LinkedHashSet<>();
        for (BsonValue name : value.asArray()) {
            if (!name.isString() || name.asString().getValue().isEmpty()) {
                throw new RuleException("data.failCommands", "every entry must be a command name");
            }
            commands.add(name.asString().getValue());
        }
        for (Set<String> names : ALIASES) {
            if (commands.stream().anyMatch(names::contains)) {
                commands.addAll(names);
            }
        }
        return Set.copyOf(commands);
    }

    /**
     * The server adds a failCommand writeConcernError only to commands that take a write concern
     * (a find with such a rule runs untouched and spends none of its times), so such a rule
     * matches only those; a rule left with none would never fire, and is refused.
     */
    private static Set<String> takingAWriteConcern(Set<String> commands) {
        Set<String> taking = new LinkedHashSet<>(commands);
        taking.retainAll(WriteConcernError.COMMANDS);
        if (taking.isEmpty()) {
            throw new RuleException("data.writeConcernError", "none of failCommands " + new TreeSet<>(commands) + " takes a write concern, "
                    + "and the server adds writeConcernError only to those that do (insert, update, delete, findAndModify, "
                    + "commitTransaction, createIndexes, ...)");
        }
        return Set.copyOf(taking);
    }

    /**
     * A rule on a member the proxy does not front would never fire, silently (a typo, "localhost:27017" for a
     * member the proxy knows as 127.0.0.1:27017, "secondary" in a one-member deployment): refused, naming the
     * members there are, as a deployment fault on it is.
     */
    private String member(BsonDocument data) {
        String member = RuleFields.string(data, "member");
        if (member == null) {
            return null;
        }
        if (!member.equals("primary") && !member.equals("secondary") && !isHostPort(member)) {
            throw new RuleException("data.member", "must be \"primary\", \"secondary\" or host:port");
        }
        String unknown = unknownMember.apply(member);
        if (unknown != null) {
            throw new RuleException("data.member", unknown);
        }
        // as the matcher compares it with a member's address: "[0:0:0:0:0:0:0:1]:27017" is the member "[::1]:27017"
        return isHostPort(member) ? io.blackpipe.topology.MemberAddress.parse(member).toString() : member;
    }

    /** host:port with a port the matcher can ever see (a rule for "db1:" or "db1:port" would silently never fire). */
    static boolean isHostPort(String member) {
        if (!member.matches(".+:[0-9]{1,5}")) {
            return false;
        }
        try {
            return io.blackpipe.topology.MemberAddress.parse(member).port() > 0;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static String attempt(BsonDocument data) {
        String attempt = RuleFields.string(data, "attempt");
        if (attempt != null && !attempt.equals("first") && !attempt.equals("retry")) {
            throw new RuleException("data.attempt", "must be \"first\" or \"retry\"");
        }
        return attempt;
    }

}
