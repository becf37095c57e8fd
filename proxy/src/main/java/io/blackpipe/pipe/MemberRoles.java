package io.blackpipe.pipe;

import io.blackpipe.fault.Plural;
import io.blackpipe.topology.Discovery;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberMap;
import io.blackpipe.topology.MemberStates;
import io.blackpipe.topology.SimulatedReplicaSet;
import io.blackpipe.wire.BlockingCommandClient;
import io.blackpipe.wire.Tls;
import java.io.IOException;
import org.bson.BsonDocument;
import org.bson.BsonInt32;

/**
 * Who is primary: what each member says about itself (asked directly, or, for a simulated set,
 * made up from the real node's hello), and the failovers that change it (a real set's stepdown,
 * a simulated set's election).
 */
final class MemberRoles {
    private final Discovery.Deployment deployment;
    private final MemberMap members;
    private final MemberStates states;
    /** null: the members' roles are their own. */
    private final SimulatedReplicaSet simulation;
    /** The transactions each simulated election ends (unused without a simulation). */
    private final FailoverEndedTransactions endedTransactions;
    private final PrimaryStepDown primaryStepDown;
    private final int connectTimeoutMillis;
    private final Tls.Client upstreamTls;
    private final ProxyLog log;

    MemberRoles(Discovery.Deployment deployment, MemberMap members, MemberStates states, SimulatedReplicaSet simulation,
                FailoverEndedTransactions endedTransactions, PrimaryStepDown primaryStepDown, int connectTimeoutMillis,
                Tls.Client upstreamTls, ProxyLog log) {
        this.deployment = deployment;
        this.members = members;
        this.states = states;
        this.simulation = simulation;
        this.endedTransactions = endedTransactions;
        this.primaryStepDown = primaryStepDown;
        this.connectTimeoutMillis = connectTimeoutMillis;
        this.upstreamTls = upstreamTls;
        this.log = log;
    }

    /** At start, so roles are known before any client has connected (rules and faults aimed at "primary" need them). */
    void observeAtStart() {
        if (simulation != null) {
            observeSimulated();
            return;
        }
        primaryStepDown.warnIfItCannotAuthenticate(deployment);
        if (deployment.answered() != null) {
            states.observe(deployment.answered(), deployment.hello());
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
            try (BlockingCommandClient client = new BlockingCommandClient(member.dial().host(), member.dial().port(),
                    connectTimeoutMillis, upstreamTls)) {
                states.observe(member.upstream(), client.run("admin", new BsonDocument("hello", new BsonInt32(1))));
            } catch (IOException | RuntimeException e) {
                log.info("member " + member.upstream() + " did not answer hello: " + e.getMessage());
            }
        }
    }

    /** What each simulated member says about itself, from the real node's hello. */
    private void observeSimulated() {
        simulation.observe(deployment.hello(), states);
    }

    /** A simulated set elects the next member; a real one is asked to step its primary down. */
    void failover() {
        if (simulation != null) {
            MemberAddress next = simulation.failover();
            endedTransactions.failover();
            observeSimulated();
            log.info("failover (simulated): " + next + " is primary now");
            return;
        }
        if (!deployment.isReplicaSet() || members.members().size() < 2) {
            throw new IllegalStateException("failover needs a replica set with more than one member; "
                    + "this upstream is a " + deployment.kind() + " with " + Plural.of(members.members().size(), "member")
                    + (members.members().size() == 1 ? " (blackpipe can present one node as a set: --simulate-members 3,"
                            + " BlackPipe.builder().simulateMembers(3), @BlackPipeTest(simulateMembers = 3))" : ""));
        }
        refresh();
        primaryStepDown.run(members.members(), states);
    }

    /**
     * A simulated set back as it started (first member primary) by one more election, as a failover's; false when
     * nothing moved. A real set's failovers are never undone: its members elect, not the proxy.
     */
    boolean restoreSimulatedPrimary() {
        MemberAddress first = simulation == null ? null : simulation.restoreFirstPrimary();
        if (first != null) {
            endedTransactions.failover(); // an election too: the transactions open on the primary it replaced end
            observeSimulated();
            log.info("failover undone (simulated): " + first + " is primary again");
        }
        return first != null;
    }
}
