package io.blackpipe.pipe;

import org.bson.BsonDocument;

/**
 * One connection's side of its member's blackhole: the member may fall behind it (an outage, a restart's exit), and
 * the connection then lets nothing through until the blackhole ends, even once the listener's flag is down, and ends
 * then as the fall would have ended it. Used from the connection's event loop only.
 */
final class BehindTheBlackhole {
    /** How the member fell: an outage (a reset), or a restart's exit ({@code interruptedWith}: its errors' topologyVersion). */
    record Fall(String fault, BsonDocument interruptedWith) {
    }

    private Fall fell;

    /** The member fell; the first fall ended the member's end of the connection, a later one changes nothing. */
    void fell(String fault, BsonDocument interruptedWith) {
        if (fell == null) {
            fell = new Fall(fault, interruptedWith);
        }
    }

    /** Whether the member fell behind the blackhole: nothing passes until the connection ends. */
    boolean fell() {
        return fell != null;
    }

    /**
     * The blackhole ended, {@code downBy} what held the member down then (null: it was up). Returns how the connection
     * ends: as its member fell, else refused by a member down (it was made while the member was down), else null: what
     * waited in the blackhole goes on.
     */
    Fall ended(String downBy) {
        Fall end = fell != null ? fell : downBy != null ? new Fall(downBy, null) : null;
        fell = null;
        return end;
    }
}
