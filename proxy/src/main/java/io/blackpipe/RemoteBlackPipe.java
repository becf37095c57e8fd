package io.blackpipe;

import io.blackpipe.admin.AdminHttp;
import io.blackpipe.admin.StatsJson;
import io.blackpipe.fault.FaultLabels;
import io.blackpipe.fault.Bandwidth;
import io.blackpipe.fault.Direction;
import io.blackpipe.fault.IdleTimeout;
import io.blackpipe.fault.JsonDocuments;
import io.blackpipe.fault.Latency;
import io.blackpipe.fault.ScenarioException;
import io.blackpipe.fault.ScenarioText;
import io.blackpipe.observe.CounterLabels;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.observe.Outcome;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;

/**
 * A blackpipe running elsewhere (a Testcontainers container, a sidecar, another JVM), driven through
 * its admin API with the methods of the embedded {@link BlackPipe}: the same {@link FailRule}s,
 * scenarios, deployment faults, counters, fired counts and history.
 *
 * <pre>{@code
 * RemoteBlackPipe blackPipe = blackpipeContainer.control();   // or RemoteBlackPipe.connect("http://host:9090")
 * String id = blackPipe.fail("insert").times(1).error("NotWritablePrimary");
 * MongoClient client = MongoClients.create(blackPipe.connectionString());
 * client.getDatabase("app").getCollection("orders").insertOne(new Document("x", 1)); // retried
 * assertEquals(1, blackPipe.retries("insert"));
 * assertEquals(1, blackPipe.fired(id));
 * }</pre>
 *
 * <p>As with BlackPipe, {@link #resetCounters()} and {@link #reset()} keep their baseline in this
 * object (the proxy's counters only grow, as Prometheus counters must), so two clients of one proxy
 * count each from their own reset. What differs: a rule added without an id gets the proxy's (a
 * UUID); there is no registry() or server() (read /metrics); nothing needs closing.
 *
 * <p>When the proxy refuses a request its message says why, in an exception: an
 * {@link IllegalArgumentException} for what BlackPipe refuses so too (a bad rule, an unknown member,
 * rule id or bundled scenario), an {@link IllegalStateException} for what cannot be done now (a
 * failover without a replica set), a wrong admin token, or a proxy that does not answer.
 */
public final class RemoteBlackPipe {
    private static final BsonDocument NO_COUNTS = new BsonDocument();

    /**
     * One member as the proxy reports it: role primary, secondary, ...; state up, outage, blackhole, quiescing or
     * restarting (a restart's quiesce, then its time down); the latency in force
     * on its link to its clients (0 without one), its jitter and which way it acts ("both", "replies" or "requests"; null:
     * none); the bandwidth of each of its connections (0: none) and which way it narrows; its idle timeout (0: none) and
     * what then meets a forgotten connection's client ("drop" or "reset"; null: none).
     */
    public record MemberStatus(String upstream, String advertised, String role, String state, int openConnections,
                               long latencyMillis, long jitterMillis, String latencyDirection, long bandwidthBytesPerSecond,
                               String bandwidthDirection, long idleTimeoutMillis, String idleTimeoutThen) {
    }

    /** What members() reads where a proxy older than latency, bandwidth or idle timeouts lists none. */
    private static final BsonInt64 NO_LATENCY = new BsonInt64(0);
    private final AdminCalls http;
    /** GET /stats at the last resetCounters() or reset(); later reads subtract it. */
    private volatile BsonDocument baseline = NO_COUNTS;
    /** The proxy's clock at the last reset() (ISO-8601): history() shows what was recorded since; null: everything. */
    private volatile String historySince;

    private RemoteBlackPipe(AdminHttp http) {
        this.http = new AdminCalls(http);
    }

    /** The proxy whose admin API is at {@code adminUrl} (http://host:port, or host:port), without a token. */
    public static RemoteBlackPipe connect(String adminUrl) {
        return connect(adminUrl, null);
    }

    /**
     * @param adminUrl http://host:port (http:// may be left out, as the CLI's --admin)
     * @param token    the proxy's --admin-token (BLACKPIPE_ADMIN_TOKEN); null or empty: none, as an empty variable is unset
     */
    public static RemoteBlackPipe connect(String adminUrl, String token) {
        return new RemoteBlackPipe(new AdminHttp(Arguments.adminUrl(adminUrl), Arguments.adminToken(token), "",
                " (give the proxy's admin token: RemoteBlackPipe.connect(adminUrl, token))"));
    }

    public String adminUrl() {
        return http.base();
    }

    /** The connection string the application under test should use, as the proxy reports it on /health. */
    public String connectionString() {
        return http.json("GET", "/health", null).getString("connectionString").getValue();
    }

    // ---- rules ----

    /** Adds a failCommand document as a rule; its id is the document's "id" field, else the proxy's. Returns the id. */
    public String rule(String failCommandJson) {
        return http.json("POST", "rules", required(failCommandJson)).getString("id").getValue();
    }

    /** Adds (or replaces) the rule {@code id}; the document's own id, if any, must be the same. Returns the id. */
    public String rule(String id, String failCommandJson) {
        return http.json("PUT", "rules/" + AdminHttp.encode(Arguments.ruleId(id)), required(failCommandJson)).getString("id").getValue();
    }

    private static String required(String failCommandJson) {
        if (failCommandJson == null) {
            throw new IllegalArgumentException("rule: a failCommand document is required, got null");
        }
        return failCommandJson;
    }

    /** A rule on {@code commands}, built fluently as {@link BlackPipe#fail}: {@code fail("insert").times(1).with(Fault.RESET)}. */
    public FailRule fail(String... commands) {
        return new FailRule(this::addRule, commands);
    }

    /** A rule on every command, as {@link BlackPipe#failAll()}. */
    public FailRule failAll() {
        return FailRule.onAllCommands(this::addRule);
    }

    private String addRule(String id, BsonDocument document) {
        return id == null ? rule(JsonDocuments.typedJson(document)) : rule(id, JsonDocuments.typedJson(document));
    }

    /** Removes the rule {@code id}; false when the proxy has none with that id. */
    public boolean removeRule(String id) {
        String path = "rules/" + AdminHttp.encode(Arguments.required(id, "id"));
        AdminHttp.Answer answer = http.send("DELETE", path);
        if (answer.status() == 404 && answer.body().contains("\"error\": \"no rule ")) { // not a 404 for no such route (a wrong URL)
            return false;
        }
        if (!answer.ok()) {
            throw http.refused("DELETE", path, answer);
        }
        return true;
    }

    public void clearRules() {
        http.call("DELETE", "rules");
    }

    /** How many commands the rule {@code id} has faulted (0 for an id never seen); survives its removal, as BlackPipe's. */
    public long fired(String id) {
        if (Arguments.required(id, "id").isEmpty()) {
            return 0; // no rule has an empty id (the API has no route for one)
        }
        return http.json("GET", "rules/" + AdminHttp.encode(id) + "/fired", null).getNumber("fired").longValue();
    }

    /** The active rules, each as its failCommand document in JSON (with its "id"). */
    public List<String> rules() {
        List<String> rules = new ArrayList<>();
        for (BsonValue listed : http.json("GET", "rules", null).getArray("rules")) {
            rules.add(JsonDocuments.typedJson(listed.asDocument().getDocument("rule"))); // with its id, as the listing gives it
        }
        return rules;
    }

    // ---- counters (GET /api/v1/stats), named and checked as BlackPipe's ----

    /** Attempts of {@code command} (first attempts and retries) since the last {@link #resetCounters()}; see {@link BlackPipe#attempts}. */
    public long attempts(String command) {
        return count("commands", "command", CounterLabels.command(command), "attempts");
    }

    /** Attempts of {@code command} the proxy recognised as retries. */
    public long retries(String command) {
        return count("commands", "command", CounterLabels.command(command), "retries");
    }

    /** Attempts of {@code command} that ended in {@code outcome}: ok, error, network_error or no_reply. */
    public long outcomes(String command, String outcome) {
        return count("outcomes", "command", CounterLabels.command(command), CounterLabels.outcome(outcome));
    }

    public long outcomes(String command, Outcome outcome) {
        return outcomes(command, Arguments.required(outcome, "outcome").label());
    }

    /** Faults injected under the label {@code fault} (e.g. resetConnection, errorReply, outage), all commands. */
    public long faultsInjected(String fault) {
        return count("faults", "fault", FaultLabels.check(fault), "count");
    }

    public long faultsInjected(Fault fault) {
        return faultsInjected(Arguments.required(fault, "fault").label());
    }

    /** Counts from zero again, as this object reports them; the proxy's counters and /metrics are untouched. */
    public void resetCounters() {
        baseline = stats();
    }

    private BsonDocument stats() {
        return http.json("GET", "stats", null);
    }

    private long count(String table, String key, String label, String field) {
        BsonDocument stats = stats();
        if (!StatsJson.sameRun(baseline, stats)) {
            throw new IllegalStateException("the proxy at " + http.base() + " started again since resetCounters() or reset(): its counts"
                    + " began anew, and what it counted since then is unknown; call resetCounters() to count from now");
        }
        return StatsJson.sum(stats, table, field, key, label) - StatsJson.sum(baseline, table, field, key, label);
    }

    // ---- scenarios and deployment faults ----

    /** Reads a scenario file here and starts it on the proxy (checked whole first), stopping one still running. */
    public void runScenario(Path file) {
        Arguments.scenarioFile(file);
        String text;
        try {
            text = ScenarioText.read(file, file.toString());
        } catch (IOException e) {
            throw Arguments.cannotReadScenario(file, e);
        } catch (ScenarioException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        http.runScenario(text, file);
    }

    /** Starts a scenario shipped in the proxy's jar, by name ("transient-blip"); an unknown name's exception lists them. */
    public void runBundledScenario(String name) {
        http.call("POST", "scenario/bundled/" + AdminHttp.encode(Arguments.scenarioName(name)));
    }

    /** Stops the running scenario: its pending steps are cancelled, its rules removed, its member faults still in force ended. */
    public void stopScenario() {
        http.call("DELETE", "scenario");
    }

    /** Moves the primary role to another member: a real stepDown, or the simulated set's next member. */
    public void failover() {
        http.call("POST", "failover");
    }

    /** A failover in which a simulated set first has no primary for {@code election} (see {@link BlackPipe#failover(Duration)}). */
    public void failover(Duration election) {
        http.call("POST", "failover?election=" + Arguments.electionMillis(election) + "ms");
    }

    /**
     * A failover with a simulated election and rollback (see {@link BlackPipe#failover(Duration, Duration)}); returns how
     * many documents it took back.
     */
    public long failover(Duration election, Duration rollback) {
        return http.json("POST", "failover" + Arguments.failover(election, rollback).query(), null).getNumber("rolledBack").longValue();
    }

    /** {@code member} (primary, secondary, all or host:port) refuses connections for {@code duration} (zero: until restored). */
    public void outage(String member, Duration duration) {
        memberAction(member, "outage", Arguments.millis(duration));
    }

    /** {@code member} accepts connections but nothing passes for {@code duration} (zero: until restored). */
    public void blackhole(String member, Duration duration) {
        memberAction(member, "blackhole", Arguments.millis(duration));
    }

    /** Everything {@code member} sends its clients arrives {@code delay} late (see {@link BlackPipe#latency(String, Duration, Duration)}). */
    public void latency(String member, Duration delay, Duration duration) {
        latency(member, delay, Duration.ZERO, duration);
    }

    /** The same, each message's delay drawn evenly from delay ± jitter (never below 0). */
    public void latency(String member, Duration delay, Duration jitter, Duration duration) {
        latency(member, delay, jitter, Latency.DEFAULT_DIRECTION, duration);
    }

    /** The same, on what goes {@code direction} (see {@link BlackPipe#latency(String, Duration, Duration, Direction, Duration)}). */
    public void latency(String member, Duration delay, Duration jitter, Direction direction, Duration duration) {
        Latency latency = Arguments.latency(delay, jitter, direction);
        long millis = Arguments.millis(duration);
        http.call("POST", "members/" + AdminHttp.encode(member(member)) + "/latency?delay=" + latency.delayMillis() + "ms&jitter="
                + latency.jitterMillis() + "ms" + direction.parameterUnless(Latency.DEFAULT_DIRECTION) + (millis == 0 ? "" : "&duration=" + millis + "ms"));
    }

    /** Each connection from {@code member} to its clients carries at most {@code bytesPerSecond} each way (see {@link BlackPipe#bandwidth}). */
    public void bandwidth(String member, long bytesPerSecond, Duration duration) {
        bandwidth(member, bytesPerSecond, Bandwidth.DEFAULT_DIRECTION, duration);
    }

    /** The same, narrowing only what goes {@code direction} (see {@link BlackPipe#bandwidth(String, long, Direction, Duration)}). */
    public void bandwidth(String member, long bytesPerSecond, Direction direction, Duration duration) {
        Bandwidth bandwidth = new Bandwidth(bytesPerSecond, direction);
        long millis = Arguments.millis(duration);
        http.call("POST", "members/" + AdminHttp.encode(member(member)) + "/bandwidth?rate=" + bandwidth.bytesPerSecond() + direction.parameterUnless(Bandwidth.DEFAULT_DIRECTION)
                + (millis == 0 ? "" : "&duration=" + millis + "ms"));
    }

    /** A middlebox forgets {@code member}'s connections idle for {@code after} (see {@link BlackPipe#idleTimeout}). */
    public void idleTimeout(String member, Duration after, IdleTimeout.Then then, Duration duration) {
        IdleTimeout idle = new IdleTimeout(Arguments.positiveMillis(after, "after"), then);
        long millis = Arguments.millis(duration);
        http.call("POST", "members/" + AdminHttp.encode(member(member)) + "/idleTimeout?after=" + idle.afterMillis() + "ms&then="
                + idle.then().label() + (millis == 0 ? "" : "&duration=" + millis + "ms"));
    }

    /** Restarts {@code member} cleanly: quiesce, exit, down (see {@link BlackPipe#restart}). */
    public void restart(String member, Duration quiesce, Duration down) {
        http.call("POST", "members/" + AdminHttp.encode(member(member)) + "/restart" + Arguments.restart(quiesce, down).query());
    }

    /** Ends an outage, blackhole, latency, bandwidth, idle timeout or restart of {@code member} now. */
    public void restore(String member) {
        memberAction(member, "restore", 0);
    }

    private void memberAction(String member, String action, long millis) {
        http.call("POST", "members/" + AdminHttp.encode(member(member)) + "/" + action + (millis == 0 ? "" : "?duration=" + millis + "ms"));
    }

    private static String member(String member) {
        return Arguments.member(member);
    }

    /** Resets (TCP RST) every open client connection of {@code member} now; returns how many, once they are reset. */
    public int resetConnections(String member) {
        return http.json("POST", "connections/reset?member=" + AdminHttp.encode(member(member)), null).getNumber("reset").intValue();
    }

    /** The members as the proxy sees them now: which is primary (after a failover too), which is down. */
    public List<MemberStatus> members() {
        List<MemberStatus> members = new ArrayList<>();
        for (BsonValue value : http.json("GET", "members", null).getArray("members")) {
            BsonDocument member = value.asDocument();
            members.add(new MemberStatus(member.getString("upstream").getValue(), member.getString("advertised").getValue(),
                    member.getString("role").getValue(), member.getString("state").getValue(),
                    member.getNumber("openConnections").intValue(), member.getNumber("latencyMS", NO_LATENCY).longValue(),
                    member.getNumber("jitterMS", NO_LATENCY).longValue(), // (a proxy older than latency sends neither)
                    direction(member, "latencyDirection", member.getNumber("latencyMS", NO_LATENCY).longValue()
                            + member.getNumber("jitterMS", NO_LATENCY).longValue(), Latency.DEFAULT_DIRECTION),
                    member.getNumber("bandwidthBytesPerSecond", NO_LATENCY).longValue(),
                    direction(member, "bandwidthDirection", member.getNumber("bandwidthBytesPerSecond", NO_LATENCY).longValue(), Bandwidth.DEFAULT_DIRECTION),
                    member.getNumber("idleTimeoutMS", NO_LATENCY).longValue(),
                    member.isString("idleTimeoutThen") ? member.getString("idleTimeoutThen").getValue() : null));
        }
        return members;
    }

    /** "both", "replies", "requests", or null without the fault ({@code amount} 0); a proxy older than directions lists none. */
    private static String direction(BsonDocument member, String field, long amount, Direction olderProxys) {
        return amount == 0 ? null : member.isString(field) ? member.getString(field).getValue() : olderProxys.label();
    }

    /** The latest application commands (up to 10,000), oldest first: those completed since the last {@link #reset()}. */
    public List<HistoryEntry> history() {
        String since = historySince;
        String body = http.call("GET", since == null ? "history" : "history?since=" + AdminHttp.encode(since)).body();
        List<HistoryEntry> entries = new ArrayList<>();
        for (String line : body.split("\n")) {
            if (!line.isBlank()) {
                try {
                    entries.add(HistoryEntry.fromJson(line));
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException("GET " + adminUrl() + "/api/v1/history answered " + e.getMessage(), e);
                }
            }
        }
        return entries;
    }

    /**
     * Back to a clean slate between tests, as {@link BlackPipe#reset()}: on the proxy (POST /api/v1/reset) scenario
     * stopped, rules cleared with their fired counts, members restored, a simulated set's first member primary again,
     * the sessions seen forgotten; here counters from zero and history() emptied.
     */
    public void reset() {
        historySince = http.json("POST", "reset", null).getString("at").getValue();
        baseline = stats();
    }
}
