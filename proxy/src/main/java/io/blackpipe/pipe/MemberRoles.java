package io.blackpipe.pipe;

import io.blackpipe.fault.Failover;
import io.blackpipe.fault.Plural;
import io.blackpipe.topology.Discovery;
import io.blackpipe.topology.HelloProbe;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberMap;
import io.blackpipe.topology.MemberQuirks;
import io.blackpipe.topology.MemberState;
import io.blackpipe.topology.MemberStates;
import io.blackpipe.topology.SimulatedReplicaSet;
import io.blackpipe.wire.BlockingCommandClient;
import io.blackpipe.wire.Tls;
import io.blackpipe.wire.auth.Credential;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.bson.BsonDocument;
import org.bson.BsonInt32;

/**
 * Who is primary: what each member says about itself (asked directly, or, for a simulated set,
 * made up from the real node's hello), and the failovers that change it (a real set's stepdown,
 * a simulated set's election).
 */
final class MemberRoles {
    /** How long a failover or a reset waits for its hello answers to go out: a loop that busy answers them later. */
    private static final long ANNOUNCE_WAIT_MILLIS = 2_000;
    /**
     * How long a reset that undid a failover waits then, for drivers that stream hello to take the answers in (their
     * monitors' threads read them within milliseconds): the next test's first write would otherwise meet the old
     * primary now and then, and be retried, counted in that test. Only a reset that moved the primary waits.
     */
    private static final long FAILBACK_SETTLE_MILLIS = 100;

    private final Discovery.Deployment deployment;
    private final MemberMap members;
    private final MemberStates states;
    /** null: the members' roles are their own. */
    private final SimulatedReplicaSet simulation;
    /** Whose connections hear of a simulated election: the awaitable hellos they hold are answered at once. */
    private final Map<MemberAddress, MemberListener> listeners;
    /** The transactions each simulated election ends (unused without a simulation). */
    private final FailoverEndedTransactions endedTransactions;
    private final PrimaryStepDown primaryStepDown;
    private final EndedTransactionAborts transactionAborts;
    /** How a simulated failover rolls back what the old primary's writes below majority did. */
    private final WriteRollback rollback;
    /** Ends a simulated election under way; the proxy's scenario timer. */
    private final ScheduledExecutorService timer;
    private volatile ScheduledFuture<?> pendingElection;
    private final int connectTimeoutMillis;
    private final Tls.Client upstreamTls;
    private final ProxyLog log;
    /** The members whose unanswered question was said: once each, not at every refresh. */
    private final Set<MemberAddress> unansweredSaid = ConcurrentHashMap.newKeySet();

    MemberRoles(Discovery.Deployment deployment, MemberMap members, MemberStates states, SimulatedReplicaSet simulation,
                Map<MemberAddress, MemberListener> listeners, FailoverEndedTransactions endedTransactions,
                WriteRollback rollback, Credential upstreamCredential, int connectTimeoutMillis, Tls.Client upstreamTls, ScheduledExecutorService timer,
                ProxyLog log) {
        this.deployment = deployment;
        this.members = members;
        this.states = states;
        this.simulation = simulation;
        this.listeners = listeners;
        this.endedTransactions = endedTransactions;
        this.primaryStepDown = new PrimaryStepDown(upstreamCredential, upstreamTls, connectTimeoutMillis, log);
        this.transactionAborts = new EndedTransactionAborts(upstreamCredential, upstreamTls, connectTimeoutMillis, log);
        this.rollback = rollback;
        this.connectTimeoutMillis = connectTimeoutMillis;
        this.upstreamTls = upstreamTls;
        this.timer = timer;
        this.log = log;
    }

    /** At start, so roles are known before any client has connected (rules and faults aimed at "primary" need them). */
    void observeAtStart() {
        if (simulation != null) {
            observeSimulated();
            learnTheNodesCommands();
            MemberQuirks node = deployment.quirks();
            // the simulated members drop every read preference on its way to the node anyway: no word of that one
            String process = QuirkNotes.process(members.members().get(0).dial().toString(), deployment.hello());
            QuirkNotes.log(log, "the real node", process, new MemberQuirks(false, node.refusesUnacknowledged(), node.lacksEndSessions(),
                    node.reappliesRetriedWrites(), node.duplicateKeyAsCommandError(), node.commitRacesWrites(),
                    node.transactionEndsRefuseReadPreference(), node.keepsSupersededTransactions(), node.legacyQueriesAsCommands()));
            simulation.members().forEach(member -> states.noteQuirks(member, node.asSimulatedMembers()));
            return;
        }
        primaryStepDown.warnIfItCannotAuthenticate(deployment);
        if (deployment.answered() != null) {
            unansweredSaid.add(deployment.answered()); // Discovery said it already, if it left a question unanswered
            states.observe(deployment.answered(), deployment.hello());
            noteQuirks(deployment.answered(), new HelloProbe.Answer(deployment.hello(), deployment.quirks()));
        }
        refresh(deployment.answered());
    }

    /** Asks every member for its hello directly; members that do not answer keep what was known. */
    void refresh() {
        if (simulation != null) {
            observeSimulated();
        } else {
            refresh(null);
        }
    }

    private void refresh(MemberAddress alreadyKnown) {
        for (Member member : members.members()) {
            if (member.upstream().equals(alreadyKnown)) {
                continue;
            }
            try {
                HelloProbe.Answer answer = HelloProbe.ask(member.dial(), connectTimeoutMillis, upstreamTls);
                states.observe(member.upstream(), answer.hello());
                noteQuirks(member.upstream(), answer);
            } catch (IOException | RuntimeException e) {
                log.info("member " + member.upstream() + " did not answer hello: " + e.getMessage());
            }
        }
    }

    /**
     * A member that refused what a mongod takes (jongodb) gets its commands as it takes them from now on. A member that
     * left a question unanswered keeps the quirks it was found to have before (a refresh before a failover, under load).
     */
    private void noteQuirks(MemberAddress member, HelloProbe.Answer answer) {
        if (!answer.complete()) {
            if (states.quirks(member).any()) {
                return;
            }
            if (unansweredSaid.add(member)) {
                log.warn(answer.unansweredWarning(member));
            }
        }
        if (states.noteQuirks(member, answer.quirks())) {
            QuirkNotes.log(log, "member " + member, QuirkNotes.process(member.toString(), answer.hello()), answer.quirks());
        }
    }

    /**
     * The commands the one real node has (listCommands needs no authentication), so a simulated
     * secondary answers one it lacks as mongod does; a node without listCommands (jongodb) leaves
     * them unknown, and a secondary refuses an unknown command as a write.
     */
    private void learnTheNodesCommands() {
        Member node = members.members().get(0); // every simulated member dials the one real node
        String unlisted;
        try (BlockingCommandClient client = new BlockingCommandClient(node.dial().host(), node.dial().port(),
                connectTimeoutMillis, upstreamTls)) {
            BsonDocument reply = client.run("admin", new BsonDocument("listCommands", new BsonInt32(1)));
            if (reply.isDocument("commands")) {
                simulation.nodeCommands(reply.getDocument("commands").keySet());
                return;
            }
            unlisted = reply.toJson();
        } catch (IOException | RuntimeException e) {
            unlisted = e.getMessage();
        }
        log.info("the real node did not list its commands (" + unlisted + "): a simulated secondary refuses a command it"
                + " does not know as a write");
    }

    /** What each simulated member says about itself, from the real node's hello. */
    private void observeSimulated() {
        simulation.observe(deployment.hello());
    }

    /**
     * After a simulated election every member's counter moved on: as every member of a real set answers its waiting
     * awaitable hellos when its state changes, each simulated member's do now, with its new state, and a driver that
     * streams hello learns of the new primary within milliseconds, not from a refused write. Returns what completes
     * once those answers are written and flushed, so that a failover or a reset that waits for it returns with them on
     * their way, where before the proxy's own event loops could still be about to send them.
     */
    private CompletableFuture<Void> announceSimulatedElection() {
        return CompletableFuture.allOf(simulation.members().stream().map(listeners::get).filter(Objects::nonNull)
                .map(MemberListener::topologyChanged).toArray(CompletableFuture<?>[]::new));
    }

    private static void settle() {
        try {
            Thread.sleep(FAILBACK_SETTLE_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits (not on an event loop: {@code announced} may need its own) for the hellos' answers to go out, a little while at most. */
    private static void awaitAnnounced(CompletableFuture<Void> announced) {
        try {
            announced.get(ANNOUNCE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            // a busy loop answers them later; nothing waits on it
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Why this deployment cannot run {@code failover}, or null when it can: asked at the failover, and of a scenario's as it loads. */
    String failoverRefusal(Failover failover) {
        if (simulation != null) {
            return null;
        }
        if (failover.simulatedOnly()) {
            return "an election's length and a rollback apply to a simulated set (--simulate-members);"
                    + " a real set's members take the time their election takes, and roll back what they must";
        }
        if (!deployment.isReplicaSet() || members.members().size() < 2) {
            return "failover needs a replica set with more than one member; "
                    + "this upstream is a " + deployment.kind() + " with " + Plural.of(members.members().size(), "member")
                    + (members.members().size() == 1 ? " (blackpipe can present one node as a set: --simulate-members 3,"
                            + " BlackPipe.builder().simulateMembers(3), @BlackPipeTest(simulateMembers = 3))" : "");
        }
        return null;
    }

    /**
     * A simulated set elects the next member; a real one is asked to step its primary down. {@code awaitAborts}: a
     * simulated failover returns once the node has aborted the transactions open on the old primary, as a stepdown
     * does, and the members' answers to the awaitable hellos they held are sent (not on a connection's event loop: an
     * rs.stepDown() there is answered at once). A simulated set first has
     * no primary for the failover's election, as while a real set elects, and has the node take back the writes its
     * rollback reaches before the members announce the new primary (a real set's members take the time their election
     * takes, and roll back what they must).
     *
     * @return how many documents the rollback removed or put back
     */
    long failover(boolean awaitAborts, Failover failover) {
        if (simulation != null) {
            long electionMillis = failover.electionMillis();
            MemberAddress next;
            synchronized (simulation) { // chosen and elected at once: two failovers at a time elect two members in turn
                next = electionMillis > 0 ? simulation.beginElection(electable()) : simulation.failover(electable());
            }
            CompletableFuture<Void> aborted = abortEndedTransactions();
            observeSimulated();
            long rolledBack = rollback.rollBack(members.members().get(0), failover.rollbackMillis()); // all dial the one node
            CompletableFuture<Void> announced = announceSimulatedElection();
            if (electionMillis > 0) {
                pendingElection = timer.schedule(this::endSimulatedElection, electionMillis, TimeUnit.MILLISECONDS);
                log.info("failover (simulated): the primary stepped down; no member is primary until " + next
                        + " is elected, in " + electionMillis + " ms");
            } else {
                log.info("failover (simulated): " + next + " is primary now");
            }
            if (awaitAborts) {
                awaitAborts(aborted);
                awaitAnnounced(announced);
            }
            return rolledBack;
        }
        String refused = failoverRefusal(failover);
        if (refused != null) {
            throw new IllegalStateException(refused);
        }
        refresh();
        primaryStepDown.run(members.members(), states);
        return 0;
    }

    /**
     * The member a simulated failover elects: the next after the primary, in the set's order, that is neither down (an
     * outage, a restart's exit) nor quiescing, as only such a member can win a real set's election; where every other
     * member is, the next in order all the same (a restart's stepdown, an app's, a scenario's failover go on as they
     * did, and the set has no primary a client can reach until that member is back).
     */
    private MemberAddress electable() {
        List<MemberAddress> order = simulation.members();
        int primary = order.indexOf(order.stream().filter(simulation::isPrimary).findFirst().orElse(order.get(0)));
        return electableFrom(order.get((primary + 1) % order.size()), order.size() - 1);
    }

    /** The first of {@code count} members from {@code first} on, in the set's order, that could win an election; else {@code first}. */
    private MemberAddress electableFrom(MemberAddress first, int count) {
        List<MemberAddress> order = simulation.members();
        for (int step = 0; step < count; step++) {
            MemberAddress candidate = order.get((order.indexOf(first) + step) % order.size());
            MemberListener listener = listeners.get(candidate);
            if (listener == null || !listener.down() && listener.quiesce() == null) {
                return candidate;
            }
        }
        return first;
    }

    /** As mongod, a primary told to shut down (one of {@code restarting}) steps down first; with no member to take over, it shuts down all the same. */
    void stepDownBeforeRestart(List<MemberListener> restarting) {
        if (restarting.stream().anyMatch(listener -> states.of(listener.member().upstream()).role() == MemberState.Role.PRIMARY)) {
            try {
                failover(true, Failover.AT_ONCE);
            } catch (IllegalStateException e) { // as a signalled mongod does
                log.info("the primary restarts without stepping down: " + e.getMessage());
            }
        }
    }

    /**
     * A simulated set back as it started (first member primary) by one more election, as a failover's; false when
     * nothing moved. A real set's failovers are never undone: its members elect, not the proxy.
     */
    boolean restoreSimulatedPrimary() {
        ScheduledFuture<?> election = pendingElection;
        if (election != null) {
            election.cancel(false); // the first member is elected now instead
        }
        MemberAddress first = simulation == null ? null : simulation.restoreFirstPrimary();
        if (first != null) {
            rollback.forget(); // an election too, that rolls nothing back
            CompletableFuture<Void> aborted = abortEndedTransactions(); // the old primary's transactions end
            observeSimulated();
            CompletableFuture<Void> announced = announceSimulatedElection();
            log.info("failover undone (simulated): " + first + " is primary again");
            awaitAborts(aborted);
            awaitAnnounced(announced);
            settle();
        }
        return first != null;
    }

    private void endSimulatedElection() {
        MemberAddress elected; // the member chosen at its start, unless it went down meanwhile: then the next up, as above
        synchronized (simulation) {
            elected = simulation.endElection(chosen -> electableFrom(chosen, simulation.members().size()));
        }
        if (elected != null) {
            observeSimulated();
            announceSimulatedElection();
            log.info("failover (simulated): " + elected + " is primary now, elected");
        }
    }

    private CompletableFuture<Void> abortEndedTransactions() {
        return transactionAborts.abort(members.members().get(0), endedTransactions.failover()); // all dial the one node
    }

    private void awaitAborts(CompletableFuture<Void> aborted) {
        try {
            aborted.get(2L * connectTimeoutMillis + 5_000, TimeUnit.MILLISECONDS); // the aborts log their own failures
        } catch (TimeoutException | ExecutionException e) {
            log.warn("failover (simulated): the node's aborts of the old primary's transactions did not end in time; they go on");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
