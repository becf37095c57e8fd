package io.blackpipe.pipe;

import io.blackpipe.fault.Failover;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The inserts a simulated primary acknowledged below majority since its last write acknowledged with majority (which
 * replicated everything before it) and within {@link Failover#MAX_ROLLBACK_MILLIS}: what a failover with a rollback
 * takes back. Every failover forgets them: the new primary's writes are the next ones a rollback can reach. Shared by
 * every connection to a simulated set; its lock is taken only for the writes a simulated primary acknowledges.
 */
final class UnreplicatedInserts {
    /** Documents remembered at most: a rollback reaching further back than that many leaves the older ones (and says so). */
    static final int MAX_DOCUMENTS = 100_000;
    private static final long MAX_ROLLBACK_NANOS = TimeUnit.MILLISECONDS.toNanos(Failover.MAX_ROLLBACK_MILLIS);

    private record Acknowledged(long atNanos, SimulatedWrite insert) {
    }

    /** What a failover rolls back; {@code forgotten}: how many documents in its reach were no longer remembered. */
    record Taken(List<SimulatedWrite> inserts, long forgotten) {
        static final Taken NOTHING = new Taken(List.of(), 0);
    }

    private final ArrayDeque<Acknowledged> recent = new ArrayDeque<>();
    private int documents;
    /** The documents dropped over {@link #MAX_DOCUMENTS}, and when the newest of them was acknowledged. */
    private long forgotten;
    private long newestForgottenNanos;

    /** The member's reply to {@code write} reached its client. */
    synchronized void acknowledged(SimulatedWrite write) {
        if (write.majority()) {
            clear(); // the commit point moved past everything acknowledged before
            return;
        }
        long now = System.nanoTime();
        recent.addLast(new Acknowledged(now, write));
        documents += write.ids().size();
        while (!recent.isEmpty() && (now - recent.peekFirst().atNanos() > MAX_ROLLBACK_NANOS || documents > MAX_DOCUMENTS)) {
            Acknowledged oldest = recent.pollFirst();
            documents -= oldest.insert().ids().size();
            if (now - oldest.atNanos() <= MAX_ROLLBACK_NANOS) {
                forgotten += oldest.insert().ids().size();
                newestForgottenNanos = oldest.atNanos();
            }
        }
    }

    /** The inserts acknowledged in the last {@code millis} (0: none), for a failover that rolls them back; forgets them all. */
    synchronized Taken takeForFailover(long millis) {
        if (millis <= 0 || recent.isEmpty() && forgotten == 0) {
            clear();
            return Taken.NOTHING;
        }
        long since = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(millis);
        List<SimulatedWrite> inserts = new ArrayList<>();
        for (Acknowledged acknowledged : recent) {
            if (acknowledged.atNanos() - since >= 0) {
                inserts.add(acknowledged.insert());
            }
        }
        Taken taken = new Taken(inserts, forgotten > 0 && newestForgottenNanos - since >= 0 ? forgotten : 0);
        clear();
        return taken;
    }

    private void clear() {
        recent.clear();
        documents = 0;
        forgotten = 0;
    }
}
