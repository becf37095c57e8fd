package io.blackpipe.fault;

import java.util.List;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The timeline steps of a scenario file that act on members (outage, blackhole, latency, bandwidth, idle timeout,
 * restart, restore, reset of connections, rolling restart), as {@link ScenarioLoader} reads them: each a member of the
 * deployment (checked as a proxy that runs it checks it) and the step's own fields, each refused at its line.
 */
abstract class MemberSteps extends ScenarioFields {
    static final List<String> TIMED_MEMBER_FIELDS = List.of("member", "duration");
    private static final List<String> LATENCY_FIELDS = List.of("member", "delay", "jitter", "direction", "duration");
    private static final List<String> BANDWIDTH_FIELDS = List.of("member", "rate", "direction", "duration");
    private static final List<String> IDLE_TIMEOUT_FIELDS = List.of("member", "after", "then", "duration");
    private static final List<String> RESTART_FIELDS = List.of("member", "quiesce", "down");
    private static final List<String> ROLLING_RESTART_FIELDS = List.of("quiesce", "down", "between");
    /** How long a rolling restart waits, unless told, between one member's return and the next one's restart. */
    static final long DEFAULT_BETWEEN_MILLIS = 10_000;
    private final Predicate<String> knownMember;
    private final UnaryOperator<String> noMember;

    MemberSteps(String source, YamlTree tree, Predicate<String> knownMember, UnaryOperator<String> noMember) {
        super(source, tree);
        this.knownMember = knownMember;
        this.noMember = noMember;
    }

    /** latency: {member: secondary, delay: 200ms, jitter: 50ms, direction: requests, duration: 10s}: delay required. */
    final Scenario.Step latencyStep(long at, BsonValue argument, String field, int line) {
        if (!argument.isDocument()) {
            throw error(field, "must be {member: ..., delay: DURATION} (jitter, direction and duration optional)");
        }
        Scenario.Step step = memberStep(at, Scenario.Kind.LATENCY, argument, field, line, LATENCY_FIELDS); // its fields first
        BsonDocument spec = argument.asDocument();
        if (!spec.containsKey("delay")) {
            throw error(field + ".delay", "required (e.g. 200ms)");
        }
        long delay = duration(spec.get("delay"), field + ".delay", true);
        long jitter = duration(spec.get("jitter"), field + ".jitter", false);
        Direction direction = word(spec, "direction", field, Latency.DEFAULT_DIRECTION, Direction::parse, "both, replies or requests");
        try {
            return step.withLatency(new Latency(delay, jitter, direction));
        } catch (IllegalArgumentException e) { // "delay: ..." or "jitter: ...": the field it names, else the step's
            int colon = e.getMessage().indexOf(": ");
            throw colon < 0 ? error(field, e.getMessage()) : error(field + "." + e.getMessage().substring(0, colon), e.getMessage().substring(colon + 2));
        }
    }

    /**
     * bandwidth: {member: primary, rate: 64KiB/s, direction: replies, duration: 10s}: rate required (a number:
     * bytes a second), direction both unless given.
     */
    final Scenario.Step bandwidthStep(long at, BsonValue argument, String field, int line) {
        if (!argument.isDocument()) {
            throw error(field, "must be {member: ..., rate: RATE} (direction and duration optional)");
        }
        Scenario.Step step = memberStep(at, Scenario.Kind.BANDWIDTH, argument, field, line, BANDWIDTH_FIELDS); // its fields first
        BsonValue rate = argument.asDocument().get("rate");
        if (rate == null) {
            throw error(field + ".rate", "required (e.g. 64KiB/s)");
        }
        String written = rate.isString() ? rate.asString().getValue() : rate.isDouble() ? String.valueOf(rate.asDouble().getValue())
                : rate.isNumber() ? String.valueOf(rate.asNumber().longValue()) : null;
        if (written == null) {
            throw error(field + ".rate", "must be a rate such as 64KiB/s, or a number of bytes a second");
        }
        Bandwidth bandwidth;
        try {
            bandwidth = Bandwidth.parse(written);
        } catch (IllegalArgumentException e) {
            throw error(field + ".rate", e.getMessage());
        }
        return step.withBandwidth(bandwidth.towards(word(argument.asDocument(), "direction", field, Bandwidth.DEFAULT_DIRECTION,
                Direction::parse, "both, replies or requests")));
    }


    /** idleTimeout: {member: primary, after: 30s, then: reset, duration: 10m}: after required, then drop unless given. */
    final Scenario.Step idleTimeoutStep(long at, BsonValue argument, String field, int line) {
        if (!argument.isDocument()) {
            throw error(field, "must be {member: ..., after: DURATION} (then and duration optional)");
        }
        Scenario.Step step = memberStep(at, Scenario.Kind.IDLE_TIMEOUT, argument, field, line, IDLE_TIMEOUT_FIELDS); // fields first
        BsonDocument spec = argument.asDocument();
        long after = duration(spec.get("after"), field + ".after", true);
        if (after < 1) {
            throw error(field + ".after", "must be at least 1ms");
        }
        IdleTimeout.Then then = word(spec, "then", field, IdleTimeout.Then.DROP, IdleTimeout.Then::parse, "drop or reset");
        try {
            return step.withIdleTimeout(new IdleTimeout(after, then));
        } catch (IllegalArgumentException e) { // "after: ..."
            throw error(field + ".after", e.getMessage().substring(e.getMessage().indexOf(": ") + 2));
        }
    }

    /** restart: secondary, or {member: primary, quiesce: 15s, down: 10s}: each of quiesce and down {@link Restart}'s default unless given. */
    final Scenario.Step restartStep(long at, BsonValue argument, String field, int line) {
        Scenario.Step step = memberStep(at, Scenario.Kind.RESTART, argument, field, line, RESTART_FIELDS); // fields first
        return step.withRestart(restart(argument.isDocument() ? argument.asDocument() : new BsonDocument(), field));
    }

    /** rollingRestart: {quiesce: 15s, down: 10s, between: 10s}, each with its default unless given ({} takes them all). */
    final Scenario.Step rollingRestartStep(long at, BsonValue argument, String field, int line) {
        if (!argument.isDocument()) {
            throw error(field, "must be {quiesce: ..., down: ..., between: ...} (each optional: {} takes the defaults)");
        }
        BsonDocument spec = argument.asDocument();
        onlyFields(spec, field, ROLLING_RESTART_FIELDS);
        long between = spec.containsKey("between") ? duration(spec.get("between"), field + ".between", false) : DEFAULT_BETWEEN_MILLIS;
        if (between > Restart.MAX_MILLIS) { // as quiesce and down: past that, member i's turn (i times the three) overflowed
            throw error(field + ".between", "must be from 0 to 24h, got " + between + "ms");
        }
        return new Scenario.Step(at, Scenario.Kind.ROLLING_RESTART, null, null, between, line).withRestart(restart(spec, field));
    }

    /** A restart's quiesce and down from {@code spec}, each {@link Restart}'s default unless given. */
    private Restart restart(BsonDocument spec, String field) {
        long quiesce = spec.containsKey("quiesce") ? duration(spec.get("quiesce"), field + ".quiesce", false) : Restart.DEFAULT_QUIESCE_MILLIS;
        long down = spec.containsKey("down") ? duration(spec.get("down"), field + ".down", false) : Restart.DEFAULT_DOWN_MILLIS;
        try {
            return new Restart(quiesce, down);
        } catch (IllegalArgumentException e) { // "quiesce: ..." or "down: ..."
            int colon = e.getMessage().indexOf(": ");
            throw error(field + "." + e.getMessage().substring(0, colon), e.getMessage().substring(colon + 2));
        }
    }

    final Scenario.Step memberStep(long at, Scenario.Kind kind, BsonValue argument, String field, int line, List<String> fields) {
        String member;
        long duration = 0;
        if (argument.isString()) {
            member = argument.asString().getValue();
        } else if (argument.isDocument()) {
            BsonDocument spec = argument.asDocument();
            onlyFields(spec, field, fields);
            member = requiredString(spec, "member", field + ".member");
            if (spec.containsKey("duration")) {
                duration = duration(spec.get("duration"), field + ".duration", false);
                if (duration < 1) { // 0 is how the proxy spells "until restored"
                    throw error(field + ".duration", "must be at least 1ms (leave it out for until restored)");
                }
            }
        } else {
            throw error(field, "must be a member name or {" + String.join(": ..., ", fields) + ": ...}");
        }
        if (!knownMember.test(member)) {
            throw error(field + ".member", noMember.apply(member));
        }
        return new Scenario.Step(at, kind, null, member, duration, line);
    }
}
