package io.blackpipe.topology;

import java.util.concurrent.TimeUnit;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The member's last hello reply on one connection, as it sent it: what an answer the proxy makes
 * in the member's place repeats. Used from the connection's event loop only.
 */
final class LastHello {
    private final HelloRewriter rewriter;
    private final MemberStates states;
    private final MemberAddress member;
    private final SimulatedReplicaSet simulation;
    private BsonDocument hello;
    private long receivedNanos;

    LastHello(HelloRewriter rewriter, MemberStates states, MemberAddress member, SimulatedReplicaSet simulation) {
        this.rewriter = rewriter;
        this.states = states;
        this.member = member;
        this.simulation = simulation;
    }

    /** Keeps {@code reply} (the caller's own copy); a refused hello (bad arguments, a read preference the node refuses) says nothing of the member. */
    void remember(BsonDocument reply) {
        if (HelloReplies.isError(reply)) {
            return;
        }
        hello = reply;
        receivedNanos = System.nanoTime();
    }

    boolean known() {
        return hello != null;
    }

    /** The topologyVersion the member last sent, as it sent it; null when none. */
    BsonValue topologyVersion() {
        return hello == null ? null : hello.get("topologyVersion");
    }

    /**
     * The member's last hello reply, as it would answer {@code command} now: with the shifted counter,
     * naming the proxy, its localTime moved on by the time since (on the member's clock, not the proxy's).
     */
    BsonDocument now(String command) {
        BsonDocument body = hello.clone();
        if (body.isDateTime("localTime")) {
            long since = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - receivedNanos);
            body.put("localTime", new BsonDateTime(body.getDateTime("localTime").getValue() + since));
        }
        body.remove("speculativeAuthenticate"); // the handshake's answers, not a heartbeat's
        body.remove("saslSupportedMechs");
        String writable = "hello".equals(command) ? "isWritablePrimary" : "ismaster";
        String other = writable.equals("ismaster") ? "isWritablePrimary" : "ismaster";
        if (body.containsKey(other)) {
            body.put(writable, body.remove(other));
        }
        if (simulation != null) {
            rewriter.rewriteReply(body);
            simulation.rewriteWithCounter(body, member); // its role now, which an election may have changed
        } else {
            states.shiftReply(member, body);
            rewriter.rewriteReply(body);
        }
        return body;
    }
}
