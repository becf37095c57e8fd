package io.blackpipe.pipe;

import io.blackpipe.topology.Discovery;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberQuirks;
import io.blackpipe.wire.CommandFacts;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A transaction's commit goes alone to a member whose commit races the writes beside it
 * ({@link MemberQuirks#commitRacesWrites}, jongodb 0.1.6). Such a member commits by copying each collection the
 * transaction wrote, merging the transaction's changes into the copy and putting the copy back, and
 * takes other writes meanwhile: a write outside a transaction, or another commit, that lands between the
 * copy and its return is lost, though its client was told it succeeded. mongod loses neither. So there a
 * commitTransaction waits until the writes at the member were answered, and the writes and commits sent
 * while it runs wait for its reply; writes also wait while a commit waits, so that a steady stream of them
 * cannot keep a commit out. Reads and the statements inside a transaction (kept apart until its commit)
 * go as they come. Shared by every member, as the one node behind simulated members is, and by every proxy in
 * this JVM in front of the same node (JUnit classes run in parallel, each with a proxy of its own: a commit through
 * one lost the writes through another); a waiter's wake-up is called (on the thread that ended what it waited for)
 * once it may go, and it then asks again.
 */
final class CommitsAlone {
    /** The gate of each node set, by the addresses the proxies dial: proxies in front of the same node share one. */
    private static final Map<String, CommitsAlone> BY_NODES = new ConcurrentHashMap<>();

    /** What such a member changes outside a transaction, and so what a commit must not run beside. */
    private static final Set<String> WRITES = Set.of("insert", "update", "delete", "findAndModify", "findandmodify",
            "bulkWrite", "create", "createIndexes", "drop", "dropDatabase", "dropIndexes", "deleteIndexes", "collMod",
            "renameCollection");

    /** How a command stands to a commit. */
    enum Kind {
        COMMIT, WRITE
    }

    private int writesAtTheMember;
    private boolean commitAtTheMember;
    /** The waiting commits, by their wake-up (a connection has one request waiting at a time). */
    private final Set<Runnable> commitsWaiting = new HashSet<>();
    private final List<Runnable> wakeUps = new ArrayList<>();

    /**
     * The gate every proxy of this JVM that dials the same nodes shares: by the addresses dialled, resolved, not the members'
     * names, which a simulated set makes up (simulated-1:PORT), nor as written: a simulated set and a plain proxy over one
     * jongodb had two gates, and so had localhost:P and 127.0.0.1:P.
     */
    static CommitsAlone sharedBy(Discovery.Deployment deployment) {
        String nodes = deployment.members().stream().map(member -> node(deployment.dialAliases().getOrDefault(member, member)))
                .distinct().sorted().toList().toString();
        return BY_NODES.computeIfAbsent(nodes, key -> new CommitsAlone());
    }

    /** The node's address as resolved (127.0.0.1:PORT, whether written localhost or not); its name when it resolves to none. */
    private static String node(MemberAddress address) {
        InetSocketAddress resolved = new InetSocketAddress(address.host(), address.port());
        return resolved.isUnresolved() ? address.toString() : resolved.getAddress().getHostAddress() + ":" + address.port();
    }

    /** COMMIT or WRITE for a command this gate holds at a member with the quirk, else null. */
    static Kind kindOf(CommandFacts facts, MemberQuirks quirks) {
        if (!quirks.commitRacesWrites()) {
            return null;
        }
        if (facts.name().equals("commitTransaction")) {
            return Kind.COMMIT;
        }
        // a w:0 write is answered only where the member takes it as w:1 (QuirkRewrites): else no reply would end it
        boolean answered = !facts.moreToCome() || quirks.refusesUnacknowledged();
        return answered && !facts.inTransaction() && WRITES.contains(facts.name()) ? Kind.WRITE : null;
    }

    /**
     * Whether a command of this kind goes to the member now; if so, it is at the member until {@link #ended}. If not,
     * {@code wake} (never null) is called once it may go.
     */
    synchronized boolean admits(Kind kind, Runnable wake) {
        boolean goes = kind == Kind.COMMIT
                ? !commitAtTheMember && writesAtTheMember == 0
                : !commitAtTheMember && commitsWaiting.isEmpty();
        if (!goes) {
            if (kind == Kind.COMMIT) {
                commitsWaiting.add(wake);
            }
            wakeUps.add(wake);
            return false;
        }
        if (kind == Kind.COMMIT) {
            commitsWaiting.remove(wake);
            commitAtTheMember = true;
        } else {
            writesAtTheMember++;
        }
        return true;
    }

    /** A command {@link #admits admitted} was answered, or will never be (its connection closed, it was answered in the member's place). */
    void ended(Kind kind) {
        List<Runnable> woken;
        synchronized (this) {
            if (kind == Kind.COMMIT) {
                commitAtTheMember = false;
            } else {
                writesAtTheMember--;
            }
            if (commitAtTheMember || writesAtTheMember > 0 && !commitsWaiting.isEmpty()) {
                return; // nobody waiting may go yet
            }
            woken = takeWakeUps();
        }
        woken.forEach(Runnable::run);
    }

    /** The waiter with this wake-up will not ask again (its client left): a commit that waited no longer holds writes off. */
    void gaveUp(Runnable wake) {
        List<Runnable> woken;
        synchronized (this) {
            wakeUps.remove(wake);
            if (!commitsWaiting.remove(wake) || !commitsWaiting.isEmpty() || commitAtTheMember) {
                return;
            }
            woken = takeWakeUps(); // the writes that waited behind it
        }
        woken.forEach(Runnable::run);
    }

    private List<Runnable> takeWakeUps() {
        List<Runnable> woken = new ArrayList<>(wakeUps);
        wakeUps.clear();
        return woken;
    }
}
