package io.blackpipe.pipe;

import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberStates;
import org.bson.BsonDocument;

/**
 * A member's clean restart ({@link io.blackpipe.fault.DeploymentFaults#restart}) as its {@link MemberListener}
 * keeps it, under that listener's lock: the quiesce, with its timed end, then its time down, with its own.
 *
 * <p>The member's topologyVersion moves past its ShutdownInProgress errors' only when the quiesce ends (the
 * member exits, or a restore calls the shutdown off), so that drivers, which keep an error's, take what the member
 * says next. Not before: a hello reply already on its way when the quiesce began would carry the newer counter
 * ahead of the error, and a driver would find the error stale and ignore it.
 */
final class MemberRestart {
    private final MemberAddress upstream;
    private final FaultClock clock = new FaultClock();
    private volatile Quiesce quiesce;
    private MemberStates versions;

    MemberRestart(MemberAddress upstream) {
        this.upstream = upstream;
    }

    /** A new restart (the caller {@link #end}ed any under way); returns its mark. */
    long begin(MemberStates states) {
        versions = states;
        return clock.begin();
    }

    /** The quiesce begins: for {@code millis}, then {@code exit}, unless the restart ended first. */
    void quiesceFor(long millis, Runnable exit) {
        quiesce = Quiesce.of(versions.nextTopologyVersion(upstream), millis);
        clock.endAfter(millis, exit);
    }

    Quiesce quiesce() {
        return quiesce;
    }

    boolean isCurrent(long mark) {
        return clock.isCurrent(mark);
    }

    /**
     * The member exits. Returns the version its interruptions (InterruptedAtShutdown) carry: the quiesce's errors',
     * or, without a quiesce, one newer than drivers held. The quiesce ends only once the member is down
     * ({@link #exited}): between the two, it would look up and serving.
     */
    BsonDocument exits() {
        Quiesce ending = quiesce;
        return ending == null ? versions.topologyVersion(upstream, true) : ending.topologyVersion();
    }

    /**
     * The member exited (its errors made, it is down): its quiesce ends, the topologyVersion moves on, and it is down
     * for {@code millis}, then {@code end}s the restart, unless it ended first. It comes back a new process, with a
     * processId its clients never saw.
     */
    void exited(long millis, Runnable end) {
        endQuiesce();
        versions.restarted(upstream);
        clock.endAfter(millis, end);
    }

    /** Ends the restart: its quiesce called off, or its time down over (the caller brings the member back). */
    void end() {
        clock.cancel();
        endQuiesce();
    }

    private void endQuiesce() {
        if (quiesce != null) {
            quiesce = null;
            versions.topologyVersion(upstream, true);
        }
    }
}
