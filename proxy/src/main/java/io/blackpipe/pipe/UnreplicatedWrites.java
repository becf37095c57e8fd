package io.blackpipe.pipe;

import io.blackpipe.fault.Failover;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What the writes a simulated primary acknowledged below majority changed, since its last write acknowledged with
 * majority (which replicated everything before it) and within {@link Failover#MAX_ROLLBACK_MILLIS}: what a failover
 * with a rollback takes back. Every failover forgets them: the new primary's writes are the next ones a rollback can
 * reach. Shared by every connection to a simulated set; its lock is taken only for the writes a simulated primary
 * acknowledges.
 */
final class UnreplicatedWrites {
    /** Documents remembered at most: a rollback reaching further back than that many leaves the older ones (and says so). */
    static final int MAX_DOCUMENTS = 100_000;
    private static final long MAX_ROLLBACK_NANOS = TimeUnit.MILLISECONDS.toNanos(Failover.MAX_ROLLBACK_MILLIS);

    /**
     * A document a write changed: {@code before}, what it was (a pre-image), or null when the write created it (an insert,
     * an upsert); {@code id} null for a document inserted without an _id, which cannot be told.
     */
    record Change(String database, String collection, BsonValue id, BsonDocument before) {
    }

    private record Acknowledged(long atNanos, List<Change> changes) {
    }

    /** What a failover rolls back, oldest first; {@code forgotten}: how many changes in its reach were no longer remembered. */
    record Taken(List<Change> changes, long forgotten) {
        static final Taken NOTHING = new Taken(List.of(), 0);
    }

    private final ArrayDeque<Acknowledged> recent = new ArrayDeque<>();
    /** Which primary's writes these are: one more at every failover. */
    private volatile int epoch;
    private int documents;
    /** The changes dropped over {@link #MAX_DOCUMENTS}, and when the newest of them was acknowledged. */
    private long forgotten;
    private long newestForgottenNanos;

    /** The primary a write sent now goes to, for {@link #acknowledged} and {@link #majorityAcknowledged}. */
    int epoch() {
        return epoch;
    }

    /**
     * A write acknowledged with majority, sent in {@code sentIn}, reached its client: the commit point moved past
     * everything acknowledged before.
     */
    synchronized void majorityAcknowledged(int sentIn) {
        if (sentIn == epoch) {
            clear();
        }
    }

    /**
     * A write below majority sent in {@code sentIn} that made {@code changes} reached its client (or went unanswered,
     * asking for no reply). One the old primary acknowledged after a failover (it was under way then) is left: it
     * counts as replicated in time, which a real one under way at a stepdown may be, and is none of the new primary's.
     */
    synchronized void acknowledged(List<Change> changes, int sentIn) {
        if (changes.isEmpty() || sentIn != epoch) {
            return;
        }
        long now = System.nanoTime();
        recent.addLast(new Acknowledged(now, changes));
        documents += changes.size();
        while (!recent.isEmpty() && (now - recent.peekFirst().atNanos() > MAX_ROLLBACK_NANOS || documents > MAX_DOCUMENTS)) {
            Acknowledged oldest = recent.pollFirst();
            documents -= oldest.changes().size();
            if (now - oldest.atNanos() <= MAX_ROLLBACK_NANOS) {
                forgotten += oldest.changes().size();
                newestForgottenNanos = oldest.atNanos();
            }
        }
    }

    /** The changes acknowledged in the last {@code millis} (0: none), oldest first, for a failover that rolls them back; forgets them all. */
    synchronized Taken takeForFailover(long millis) {
        epoch++;
        if (millis <= 0 || recent.isEmpty() && forgotten == 0) {
            clear();
            return Taken.NOTHING;
        }
        long since = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(millis);
        List<Change> changes = new ArrayList<>();
        for (Acknowledged acknowledged : recent) {
            if (acknowledged.atNanos() - since >= 0) {
                changes.addAll(acknowledged.changes());
            }
        }
        Taken taken = new Taken(changes, forgotten > 0 && newestForgottenNanos - since >= 0 ? forgotten : 0);
        clear();
        return taken;
    }

    private void clear() {
        recent.clear();
        documents = 0;
        forgotten = 0;
    }
}
