package io.blackpipe.fault;

import io.blackpipe.topology.MemberState;
import io.blackpipe.wire.CommandFacts;
import org.bson.BsonDocument;

/**
 * One intercepted command, and everything a fault may do with it. The pipe implements this for
 * the connection the command arrived on; exactly one of the terminal calls must be made.
 */
public interface Interception {
    CommandFacts facts();

    /** What the member last said about itself (role, wire version, topologyVersion). */
    MemberState memberState();

    /**
     * Whether the client's connection said {@code helloOk: true} in a hello or isMaster: mongod words
     * its not-primary errors "not primary" to such a client, and "not master" to any other.
     */
    boolean clientSaidHelloOk();

    /**
     * The topologyVersion for a state-change error from this member: the current one, or a newer one (which the proxy
     * then keeps announcing, as after a real stepdown, to the hellos the member holds {@code announceAfterMillis} after
     * now). Null if unknown.
     */
    BsonDocument topologyVersion(boolean newer, long announceAfterMillis);

    /**
     * True when the command opens a change stream (an aggregate whose first stage is $changeStream)
     * or reads one (a getMore of a cursor such an aggregate opened on this member): mongod labels
     * its resumable errors ResumableChangeStreamError, and drivers resume only on that label.
     */
    boolean onChangeStream();

    /** Send the command on, untouched. */
    void forward();

    /** Send the command on; {@code fate} decides what happens to its reply. */
    void forward(ReplyFate fate);

    /** Answer with {@code reply} instead of forwarding (the server never sees the command). */
    void answer(BsonDocument reply);

    /** Close the client connection (FIN) without forwarding. */
    void close();

    /** Reset the client connection (RST) without forwarding. */
    void reset();

    /** Neither forward nor answer; the connection stays open until the client gives up. */
    void hang();

    /** Hold the command (and everything after it on this connection) for a while, then run {@code then}. */
    void after(long millis, Runnable then);

    /**
     * Hold the command for a while, then forward it. If the client leaves meanwhile the member
     * still gets the command when the wait ends, its reply going nowhere: mongod runs a command
     * blocked by failCommand whose client went away (a write is applied; the client never knows).
     */
    void blockThenForward(long millis);
}
