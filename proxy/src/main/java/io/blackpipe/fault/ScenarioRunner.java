package io.blackpipe.fault;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;

/**
 * Runs one scenario at a time: its rules go live together, its timeline steps fire at their
 * offsets. It runs until an "end" step or a stop, which cancel what has not fired, remove the
 * scenario's rules and restore any member it faulted whose fault from it is still in force (not one an
 * operator restored, or faulted again, since).
 */
public final class ScenarioRunner {
    public enum State { IDLE, RUNNING, FINISHED, STOPPED }

    private final RuleSet rules;
    private final DeploymentFaults deployment;
    private final ScheduledExecutorService timer;
    private final Consumer<String> log;
    private final RuleParser parser;
    private final Supplier<ScenarioLoader> loader;
    private Scenario scenario;
    private State state = State.IDLE;
    private Instant startedAt;
    private final List<ScheduledFuture<?>> pending = new ArrayList<>();
    private final List<String> done = new ArrayList<>();
    /**
     * Every outage, blackhole and latency a step began, on each member: ended when the scenario ends if still in force
     * (one an operator restored, or replaced with a fault of its own, is not the scenario's to end).
     */
    private final List<DeploymentFaults.Begun> begun = new ArrayList<>();
    /** The rules this scenario put, by identity: its end removes those still in force, not one an operator set since. */
    private final Set<Rule> put = Collections.newSetFromMap(new IdentityHashMap<>());
    private int stepsLeft;
    private Instant endedAt;
    /** A failover step under way outside the lock: a stop (a reset's, a close's, the next start's) waits for it to end. */
    private Scenario.Step failingOver;

    /** @param loader a loader that checks scenarios against the proxy's members, for {@link #start(Reading)} */
    public ScenarioRunner(RuleSet rules, DeploymentFaults deployment, ScheduledExecutorService timer, Consumer<String> log,
                          RuleParser parser, Supplier<ScenarioLoader> loader) {
        this.rules = rules;
        this.deployment = deployment;
        this.timer = timer;
        this.log = log;
        this.parser = parser;
        this.loader = loader;
    }

    /** What reads a scenario to start with the proxy's loader: a file, a request's body, a bundled one. */
    public interface Reading<E extends Exception> {
        Scenario read(ScenarioLoader loader) throws E;
    }

    /**
     * Reads a scenario and starts it, as one request: refused anywhere, as it is read or as it starts (an id an
     * operator's rule holds), it takes no place in the seeded draws. Not synchronized: the parser's lock comes first.
     */
    public <E extends Exception> Scenario start(Reading<E> reading) throws E {
        return parser.parseTogether(() -> {
            Scenario scenario = reading.read(loader.get());
            start(scenario);
            return scenario;
        });
    }

    /**
     * Starts {@code next}, stopping any scenario still running.
     *
     * @throws IllegalStateException when one of its rule ids is in force already, set by an operator (or an app's
     *                               configureFailPoint): the scenario would replace that rule and, at its end, remove
     *                               it; nothing is started or stopped (but for a rule set in the moment the running
     *                               scenario stops: that one has stopped by then, and the new one is not started)
     */
    public synchronized void start(Scenario next) {
        refuseIfTaken(next, idsTakenByOthers(next)); // before the running one stops: a refused start changes nothing
        if (state == State.RUNNING) {
            stop();
        }
        // checked again as they go in: an operator's rule set while the running one stopped is not replaced either
        refuseIfTaken(next, rules.putAllUnlessTaken(next.rules(), rule -> true));
        scenario = next;
        state = State.RUNNING;
        startedAt = Instant.now();
        endedAt = null;
        done.clear();
        begun.clear();
        put.clear();
        stepsLeft = next.timeline().size();
        put.addAll(next.rules());
        log.accept("scenario '" + next.name() + "' started: " + Plural.of(next.rules().size(), "rule") + ", "
                + Plural.of(stepsLeft, "timeline step"));
        for (Scenario.Step step : next.timeline()) {
            if (step.atMillis() == 0) {
                fire(next, step); // "at: 0s" is in force when start returns
            } else {
                pending.add(timer.schedule(() -> fire(next, step), step.atMillis(), TimeUnit.MILLISECONDS));
            }
        }
    }

    private static void refuseIfTaken(Scenario next, List<String> taken) {
        if (!taken.isEmpty()) {
            throw new IllegalStateException("scenario '" + next.name() + "' not started: rule id" + (taken.size() > 1 ? "s " : " ")
                    + String.join(", ", taken) + " in force already, set outside the scenario; remove "
                    + (taken.size() > 1 ? "them" : "it") + " first, or give the scenario's rule another id");
        }
    }

    /** The ids {@code next} gives its rules (at its start or in an add step) that a rule in force has, not the running scenario's. */
    private List<String> idsTakenByOthers(Scenario next) {
        Set<String> ids = new TreeSet<>();
        next.rules().forEach(rule -> ids.add(rule.id()));
        next.timeline().stream().filter(step -> step.rule() != null).forEach(step -> ids.add(step.rule().id()));
        boolean running = state == State.RUNNING;
        return rules.rules().stream().filter(rule -> ids.contains(rule.id()) && !(running && put.contains(rule)))
                .map(Rule::id).distinct().toList();
    }

    private void fire(Scenario owner, Scenario.Step step) {
        if (step.kind() == Scenario.Kind.FAILOVER) {
            failover(owner, step);
            return;
        }
        synchronized (this) {
            if (owner != scenario || state != State.RUNNING) {
                return;
            }
            RuntimeException failed = null;
            try {
                apply(step);
            } catch (RuntimeException e) {
                failed = e;
            }
            noteFired(owner, step, failed);
        }
    }

    /**
     * A failover waits for the election to be told (a real set's stepdown, a simulated set's announcements and aborts),
     * not under this lock: the scenario's status answers meanwhile. A stop waits for it, so that once a stop (a reset's)
     * returns no step of the scenario acts any more. A step at 0s still runs inside {@link #start(Scenario)}, in force
     * when that returns.
     */
    private void failover(Scenario owner, Scenario.Step step) {
        synchronized (this) {
            if (owner != scenario || state != State.RUNNING) {
                return;
            }
            failingOver = step;
        }
        RuntimeException failed = null;
        try {
            deployment.failover(step.failover());
        } catch (RuntimeException e) {
            failed = e;
        } finally {
            synchronized (this) {
                failingOver = null;
                notifyAll();
                noteFired(owner, step, failed);
            }
        }
    }

    /** Under the lock: returns once no failover step is under way (waiting releases the lock, for status and the step's end). */
    private void awaitFailover() {
        boolean interrupted = false;
        while (failingOver != null) {
            try {
                wait();
            } catch (InterruptedException e) {
                interrupted = true; // a stop must not return while the step still acts: waited out, the interrupt kept
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void noteFired(Scenario owner, Scenario.Step step, RuntimeException failed) {
        if (failed == null) {
            done.add(step.atMillis() + "ms " + step.describe());
        } else {
            done.add(step.atMillis() + "ms " + step.describe() + " FAILED: " + failed.getMessage());
            log.accept("scenario '" + owner.name() + "' step at line " + step.line() + " failed: " + failed.getMessage());
        }
        stepsLeft--;
    }

    /**
     * A rolling restart: every member restarts once, one at a time, each next turn its quiesce, time down and the step's
     * wait after the last began (a fixed pace: a member back sooner, or held down by an outage, does not move it). Whose
     * turn it is is asked as it comes (DeploymentFaults#rollingRestartOrder):
     * a secondary of that moment not restarted yet, the primary of that moment last, so a failover meanwhile neither
     * restarts a member twice nor leaves one out. Each is a fault the scenario began; a stop cancels those to come.
     */
    private void rollingRestart(Scenario owner, Scenario.Step step) {
        List<String> left = new ArrayList<>(deployment.rollingRestartOrder().members());
        long each = step.restart().quiesceMillis() + step.restart().downMillis() + step.durationMillis();
        for (int i = 0; i < left.size(); i++) { // the first too: after this step is noted done
            pending.add(timer.schedule(() -> restartInTurn(owner, step, left), i * each, TimeUnit.MILLISECONDS));
        }
    }

    private synchronized void restartInTurn(Scenario owner, Scenario.Step step, List<String> left) {
        if (owner != scenario || state != State.RUNNING || left.isEmpty()) {
            return;
        }
        long began = Duration.between(startedAt, Instant.now()).toMillis(); // the members' turns come long after the step
        DeploymentFaults.RollingOrder now = deployment.rollingRestartOrder();
        String member = now.members().stream().filter(left::contains).findFirst().orElse(left.get(0));
        left.remove(member);
        String named = now.primaries().contains(member) ? "primary " + member : member;
        try {
            begun.addAll(deployment.restart(member, step.restart()));
            done.add(began + "ms rolling restart: " + named);
        } catch (RuntimeException e) {
            done.add(began + "ms rolling restart: " + named + " FAILED: " + e.getMessage());
            log.accept("scenario '" + owner.name() + "' rolling restart of " + named + " failed: " + e.getMessage());
        }
    }

    private void apply(Scenario.Step step) {
        switch (step.kind()) {
            case ADD -> {
                if (!rules.putAllUnlessTaken(List.of(step.rule()), rule -> !put.contains(rule)).isEmpty()) {
                    throw operatorsRule(step.rule().id());
                }
                put.add(step.rule());
            }
            case REMOVE -> {
                refuseAnOperatorsRule(step.target());
                if (!rules.removeIf(rule -> rule.id().equals(step.target()) && put.contains(rule))) {
                    throw new IllegalStateException("rule " + step.target() + " was not in force (removed outside the scenario, or its add"
                            + " step met an operator's rule)");
                }
            }
            case CLEAR -> rules.clear();
            // the members themselves, not the selector: after a failover "primary" is another one
            case OUTAGE -> begun.addAll(deployment.outage(step.target(), step.durationMillis()));
            case BLACKHOLE -> begun.addAll(deployment.blackhole(step.target(), step.durationMillis()));
            case LATENCY -> begun.addAll(deployment.latency(step.target(), step.latency(), step.durationMillis()));
            case BANDWIDTH -> begun.addAll(deployment.bandwidth(step.target(), step.bandwidth(), step.durationMillis()));
            case IDLE_TIMEOUT -> begun.addAll(deployment.idleTimeout(step.target(), step.idleTimeout(), step.durationMillis()));
            case RESTART -> begun.addAll(deployment.restart(step.target(), step.restart()));
            case ROLLING_RESTART -> rollingRestart(scenario, step);
            case RESTORE -> deployment.restore(step.target());
            case RESET_CONNECTIONS -> deployment.resetConnections(step.target());
            case FAILOVER -> throw new IllegalStateException("a failover step is fired by failover(), outside the lock");
            case END -> finish(State.FINISHED);
        }
    }

    /**
     * A step on rule {@code id} leaves alone a rule of that id set outside the scenario since it began (by an operator,
     * an app's configureFailPoint): the step fails, as its stepsDone and the log say.
     */
    private void refuseAnOperatorsRule(String id) {
        for (Rule rule : rules.rules()) {
            if (rule.id().equals(id) && !put.contains(rule)) {
                throw operatorsRule(id);
            }
        }
    }

    private static IllegalStateException operatorsRule(String id) {
        return new IllegalStateException("rule " + id + " in force was set outside the scenario: left as it is");
    }

    public synchronized void stop() {
        awaitFailover();
        if (state == State.RUNNING) {
            finish(State.STOPPED);
        }
    }

    private void finish(State end) {
        pending.forEach(f -> f.cancel(false));
        pending.clear();
        rules.removeIf(put::contains);
        put.clear();
        List<String> notEnded = new ArrayList<>();
        for (DeploymentFaults.Begun fault : begun) {
            try {
                deployment.endIfStill(fault);
            } catch (Exception e) { // a member whose port cannot be bound again: the others still end
                notEnded.add(fault.fault() + " of " + fault.upstream() + " (" + e.getMessage() + ")");
            }
        }
        begun.clear();
        state = end;
        endedAt = Instant.now();
        log.accept("scenario '" + scenario.name() + "' " + end.name().toLowerCase());
        if (!notEnded.isEmpty()) {
            done.add("ending its faults FAILED: " + String.join(", ", notEnded));
            throw new IllegalStateException("scenario '" + scenario.name() + "' " + end.name().toLowerCase()
                    + ", but could not end its " + String.join(", ", notEnded));
        }
    }

    public synchronized State state() {
        return state;
    }

    /** The scenario's progress as JSON-ready BSON: name, state, steps done and still to come. */
    public synchronized BsonDocument status() {
        BsonDocument status = new BsonDocument("state", new BsonString(state.name().toLowerCase()));
        if (scenario == null) {
            return status;
        }
        BsonArray fired = new BsonArray();
        done.forEach(d -> fired.add(new BsonString(d)));
        status.append("name", new BsonString(scenario.name()))
                .append("description", new BsonString(scenario.description()))
                .append("startedAt", new BsonString(startedAt.toString()));
        if (endedAt != null) {
            status.append("endedAt", new BsonString(endedAt.toString()));
        }
        return status.append("elapsedMillis", new BsonInt64(Duration.between(startedAt, endedAt != null ? endedAt : Instant.now()).toMillis()))
                .append("rules", new BsonInt32(scenario.rules().size())) // at its start
                .append("rulesInForce", new BsonInt32((int) rules.rules().stream().filter(put::contains).count())) // its add steps' too
                .append("stepsDone", fired)
                .append("stepsLeft", new BsonInt32(Math.max(stepsLeft, 0)))
                .append("running", BsonBoolean.valueOf(state == State.RUNNING));
    }
}
