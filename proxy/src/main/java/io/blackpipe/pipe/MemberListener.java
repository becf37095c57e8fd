package io.blackpipe.pipe;

import io.blackpipe.fault.Bandwidth;
import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.fault.IdleTimeout;
import io.blackpipe.fault.Latency;
import io.blackpipe.fault.Restart;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberMap;
import io.blackpipe.topology.MemberStates;
import io.netty.bootstrap.ServerBootstrap;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongFunction;
import org.bson.BsonDocument;

/**
 * One member's listener and the client connections it accepted. Deployment-level faults act
 * here: an outage closes the listener (new connections are refused) and resets every open
 * connection until it ends; a blackhole keeps accepting but lets nothing through either way; a
 * latency delays what goes to the member's clients, or what they send it, or both, and a bandwidth
 * spreads it over time ({@link ClientLink}).
 */
public final class MemberListener {
    private final MemberAddress upstream;
    private final MemberMap members;
    private final MemberPort port;
    private final ProxyLog log;
    private final long seed;
    private final MemberConnections connections = new MemberConnections();
    private volatile boolean blackholed;
    private volatile boolean down;
    /**
     * What holds the member down: an outage, a restart's time down, or both, each with its own end (a restart's ending
     * leaves an outage's in force, and the other way round); it is back once neither holds it.
     */
    private boolean outageHolds;
    private boolean restartHolds;
    /** What took the member down: an outage, or a restart's exit; it labels the commands cut meanwhile. */
    private volatile String downBy = DeploymentFaults.OUTAGE;
    /** The proxy is closing: its connections close at once, latency or not. */
    private volatile boolean closed;
    /** Each kind of fault is a fault of its own: each has its marks and its timed end. */
    private final FaultClock outages = new FaultClock();
    private final FaultClock blackholes = new FaultClock();
    private final MemberRestart restarts;
    /** The latency in force with its draws, the bandwidth, the idle timeout. */
    private final LinkFault<LatencyInForce> latencies = new LinkFault<>("latency");
    private final LinkFault<Bandwidth> bandwidths = new LinkFault<>("bandwidth");
    private final LinkFault<IdleTimeout> idleTimeouts = new LinkFault<>("idle timeout");

    /** @param seed where a latency's jitter draws start (--seed), so that a run replays */
    MemberListener(MemberAddress upstream, ServerBootstrap bootstrap, String bindHost, ProxyLog log, MemberMap members, long seed) {
        this.upstream = upstream;
        this.members = members;
        this.port = new MemberPort(bootstrap, bindHost, log);
        this.log = log;
        this.seed = seed;
        this.restarts = new MemberRestart(upstream);
    }

    synchronized int bind(int requestedPort) throws InterruptedException {
        return port.bind(requestedPort);
    }

    /** The member this listener serves (known once its port is bound). */
    public Member member() {
        return members.byUpstream(upstream);
    }

    public int openConnections() {
        return connections.open();
    }

    public boolean blackholed() {
        return blackholed;
    }

    public boolean down() {
        return down;
    }

    /** What took the member down ({@link DeploymentFaults#OUTAGE} or {@link DeploymentFaults#RESTART}), while it is down. */
    public String downBy() {
        return downBy;
    }

    /** The quiesce of the member's restart, while it lasts; else null. */
    public Quiesce quiesce() {
        return restarts.quiesce();
    }

    /** The latency in force on this member's link to its clients, or null. */
    public Latency latency() {
        LatencyInForce current = latencies.inForce();
        return current == null ? null : current.latency();
    }

    /** The idle timeout in force on this member's links to its clients, or null. */
    public IdleTimeout idleTimeout() {
        return idleTimeouts.inForce();
    }

    /** The bandwidth in force on each connection between this member and its clients (in its direction), or null. */
    public Bandwidth bandwidth() {
        return bandwidths.inForce();
    }

    /** The bandwidth in force on what this member sends its clients, or null (none, or one that narrows requests only). */
    Bandwidth bandwidthTowardsClients() {
        Bandwidth current = bandwidths.inForce();
        return current != null && current.narrowsReplies() ? current : null;
    }

    /** The bandwidth in force on what the clients send this member, or null (none, or one that narrows replies only). */
    Bandwidth bandwidthTowardsMember() {
        Bandwidth current = bandwidths.inForce();
        return current != null && current.narrowsRequests() ? current : null;
    }

    /** Whether a latency towards this member's clients is in force (its draw may still be 0, with a jitter). */
    boolean delaysWhatGoesToClients() {
        LatencyInForce current = latencies.inForce();
        return current != null && current.latency().direction().towardsClients();
    }

    /** How late the next message to one of this member's clients goes, in ms: 0 without a latency towards them. */
    long nextDelayMillis() {
        LatencyInForce current = latencies.inForce();
        return current == null || !current.latency().direction().towardsClients() ? 0 : current.draw();
    }

    /** How late what a client sends next reaches this member's side, in ms: 0 without a latency towards it. */
    long nextRequestDelayMillis() {
        LatencyInForce current = latencies.inForce();
        return current == null || !current.latency().direction().towardsMember() ? 0 : current.draw();
    }

    /**
     * Resets (RST) every open client connection of this member, and returns (how many) once they
     * are reset: what a client sends after this never reaches the proxy, as after a real reset.
     * Not to be called on an event loop.
     */
    public int resetConnections() {
        return connections.end(DeploymentFaults.CONNECTIONS_RESET, null);
    }

    /** The member's open client connections. */
    MemberConnections connections() {
        return connections;
    }

    /**
     * The proxy moved the member's topologyVersion on (an injected state-change error): as a
     * server answers its awaiting hellos when that happens, every connection with an awaitable
     * hello waiting (streamed or not) gets its answer now, each on its own event loop.
     */
    CompletableFuture<Void> topologyChanged() {
        return connections.each(ClientConnection::topologyChanged);
    }

    /**
     * The member goes away for {@code millis} (0: until {@link #restore()}): refused and reset. Returns the
     * mark of this outage, for {@link #endIfStill}.
     */
    public synchronized long outage(long millis) throws InterruptedException {
        long mark = outages.begin();
        outageHolds = true;
        goDown(DeploymentFaults.OUTAGE, null);
        outages.endAfter(millis, () -> endOnTime(DeploymentFaults.OUTAGE, mark));
        return mark;
    }

    /**
     * An outage (its connections reset), or a restart's time down ({@code interruptedWith}: the topologyVersion of the
     * InterruptedAtShutdown errors that end the commands in flight before each connection closes); nothing more when
     * the member is down already.
     */
    private void goDown(String by, BsonDocument interruptedWith) throws InterruptedException {
        if (!down) {
            downBy = by;
            down = true;
            String fell = by.equals(DeploymentFaults.OUTAGE) ? "outage of member " + upstream : "member " + upstream + " exits for its restart";
            if (blackholed) { // as across a partition: its clients hear of it when the blackhole ends, not before
                connections.fallBehindTheBlackhole(by, interruptedWith);
                log.info(fell + " behind its blackhole: its clients learn it when the blackhole ends");
                return;
            }
            port.closeAndHold(() -> connections.end(by, interruptedWith));
            log.info(fell + ": listener " + port.describe() + " closed");
        }
    }

    /**
     * The member restarts cleanly ({@link DeploymentFaults#restart}; a primary has stepped down already): it quiesces,
     * its hellos answered with ShutdownInProgress and a topologyVersion one newer than the member's in {@code states},
     * then exits and is down. Returns its mark, for {@link #endIfStill}.
     */
    public synchronized long restart(Restart restart, MemberStates states) throws InterruptedException {
        endRestart();
        long mark = restarts.begin(states);
        long quiesceMillis = restart.quiesceMillis();
        long downMillis = restart.downMillis();
        log.info("restart of member " + upstream + " (" + restart.describe() + ")");
        if (quiesceMillis == 0) {
            exit(mark, downMillis);
            return mark;
        }
        restarts.quiesceFor(quiesceMillis, () -> {
            try {
                exit(mark, downMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                log.warn("member " + upstream + " could not exit for its restart: " + e.getMessage());
            }
        });
        connections.each(ClientConnection::quiesceBegan);
        return mark;
    }

    /** The restart {@code mark} marks, if still in force, ends its quiesce: the member exits, down for {@code downMillis}. */
    private synchronized void exit(long mark, long downMillis) throws InterruptedException {
        if (restarts.isCurrent(mark)) {
            BsonDocument interruptedWith = restarts.exits();
            restartHolds = true;
            goDown(DeploymentFaults.RESTART, interruptedWith);
            restarts.exited(downMillis, () -> endOnTime(DeploymentFaults.RESTART, mark));
        }
    }

    /** Ends a restart: its quiesce, or the time down it began. */
    private void endRestart() throws InterruptedException {
        restarts.end();
        if (restartHolds) {
            restartHolds = false;
            upUnlessHeld();
        }
    }

    /**
     * Connections are accepted but nothing passes, in either direction, for {@code millis} (0: until restored); on a
     * member that is down too, as a partition hides it: its clients meet silence, not a refusal. Returns the mark of
     * this blackhole, for {@link #endIfStill}.
     */
    public synchronized long blackhole(long millis) throws InterruptedException {
        long mark = blackholes.begin();
        blackholed = true;
        log.info("blackhole on member " + upstream);
        blackholes.endAfter(millis, () -> endOnTime(DeploymentFaults.BLACKHOLE, mark));
        if (down && !port.listening()) {
            try {
                port.listenAgain();
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) { // Netty's sync() passes a bind's BindException on unchecked: the port taken meanwhile
                log.warn("member " + upstream + " is down and blackholed, but cannot accept on " + port.describe() + ": " + e.getMessage());
            }
        }
        return mark;
    }

    /**
     * Everything on its way to this member's clients, on every connection, goes {@code latency} late for {@code millis}
     * (0: until restored); a new latency replaces the last. Returns its mark, for {@link #endIfStill}.
     */
    public synchronized long latency(Latency latency, long millis) {
        // from --seed, apart per member and per latency begun, so that none repeats another's draws and a run replays
        return begin(latencies, DeploymentFaults.LATENCY, millis, "latency of " + latency.describeAndWay() + " on member " + upstream,
                mark -> new LatencyInForce(latency, new SplittableRandom(seed + 31L * upstream.hashCode() + mark)));
    }

    /** Each connection to this member's clients carries at most {@code bandwidth} in its direction; otherwise as {@link #latency}. */
    public synchronized long bandwidth(Bandwidth bandwidth, long millis) {
        return begin(bandwidths, DeploymentFaults.BANDWIDTH, millis, "bandwidth of " + bandwidth.describeAndWay() + " on each connection of member "
                + upstream, mark -> bandwidth);
    }

    /** A middlebox on this member's links forgets connections idle that long ({@link ClientLink}); as {@link #latency}. */
    public synchronized long idleTimeout(IdleTimeout idleTimeout, long millis) {
        long mark = begin(idleTimeouts, DeploymentFaults.IDLE_TIMEOUT, millis, "idle timeout (" + idleTimeout.describe()
                + ") on each connection of member " + upstream, begun -> idleTimeout);
        connections.each(ClientConnection::idleTimeoutBegan);
        return mark;
    }

    /** A fault of a link's kind begins: {@code inForce} makes it (given its mark), and it ends after {@code millis}. */
    private <T> long begin(LinkFault<T> link, String fault, long millis, String logLine, LongFunction<T> inForce) {
        long mark = link.clock.begin();
        link.put(inForce.apply(mark));
        log.info(logLine);
        link.clock.endAfter(millis, () -> endOnTime(fault, mark));
        return mark;
    }

    /** Ends each fault of this member: the listener is back on its old port, and what waited goes on. */
    public synchronized void restore() throws InterruptedException {
        latencies.end(log, upstream);
        bandwidths.end(log, upstream);
        idleTimeouts.end(log, upstream);
        endBlackhole();
        endRestart();
        endOutage();
        upUnlessHeld(); // the member may be down with nothing holding it: an earlier end could not bind its port again
    }

    /**
     * Ends the {@code fault} (outage, blackhole, latency, bandwidth, idle timeout) {@code mark} marks, as its method
     * returned it, if it is still the one in force: not when a newer fault of its kind, a restore, its own timed end
     * or the listener's close came after it. A fault of another kind is not this one to end.
     */
    public synchronized void endIfStill(String fault, long mark) throws InterruptedException {
        if (fault.equals(DeploymentFaults.OUTAGE) && outages.isCurrent(mark)) {
            endOutage();
        } else if (fault.equals(DeploymentFaults.BLACKHOLE) && blackholes.isCurrent(mark)) {
            endBlackhole();
        } else if (fault.equals(DeploymentFaults.LATENCY) && latencies.clock.isCurrent(mark)) {
            latencies.end(log, upstream);
        } else if (fault.equals(DeploymentFaults.BANDWIDTH) && bandwidths.clock.isCurrent(mark)) {
            bandwidths.end(log, upstream);
        } else if (fault.equals(DeploymentFaults.IDLE_TIMEOUT) && idleTimeouts.clock.isCurrent(mark)) {
            idleTimeouts.end(log, upstream);
        } else if (fault.equals(DeploymentFaults.RESTART) && restarts.isCurrent(mark)) {
            endRestart();
        }
    }

    /** A timed end: nobody to tell when it fails, so the log says it. */
    private void endOnTime(String fault, long mark) {
        try {
            endIfStill(fault, mark);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("could not end the " + fault + " of member " + upstream + ": " + e.getMessage());
        }
    }

    private void endOutage() throws InterruptedException {
        outages.cancel();
        if (outageHolds) {
            outageHolds = false;
            upUnlessHeld();
        }
    }

    /** Listens again, unless an outage or a restart's time down still holds the member down (then it is down by that). */
    private void upUnlessHeld() throws InterruptedException {
        if (outageHolds || restartHolds) {
            downBy = outageHolds ? DeploymentFaults.OUTAGE : DeploymentFaults.RESTART;
            return;
        }
        if (down) {
            // Up once bound, so that "up" means listening (a failed bind, the port taken, leaves it down). A client
            // accepted before the next line is read only once its upstream connection is up (no auto-read till then),
            // an upstream connect later: only a thread descheduled here that long would see it taken for one cut.
            if (!port.listening()) { // it listens already where a blackhole hid it down
                port.listenAgain();
            }
            down = false;
            log.info("member " + upstream + " is back on " + port.describe());
        }
    }

    /**
     * What waited in the blackhole goes on; but where the member fell during it, or is down, its connections end now,
     * as the fall would have ended them (see {@link MemberConnections#blackholeEnded}), and it refuses again.
     */
    private void endBlackhole() throws InterruptedException {
        blackholes.cancel();
        if (blackholed) {
            blackholed = false;
            if (down && port.listening()) {
                port.closeAndHold(() -> connections.blackholeEnded(downBy));
            } else {
                connections.blackholeEnded(down ? downBy : null);
            }
        }
    }

    /** Whether the proxy closed this listener: its connections close now, whatever waits on their way. */
    boolean closed() {
        return closed;
    }

    synchronized void close() {
        closed = true;
        outages.cancel();
        blackholes.cancel();
        restarts.end();
        latencies.close();
        bandwidths.close();
        idleTimeouts.close();
        port.close();
        connections.close();
    }
}
