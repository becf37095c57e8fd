package io.blackpipe.topology;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/**
 * The latest {@link MemberState} of every member, updated by every hello reply that passes, and
 * the topologyVersion advances the proxy has announced for it.
 *
 * <p>A synthesized state-change error carries a topologyVersion newer than the member's, as after
 * a real stepdown. From then on the member's own hello replies would look older than that error
 * and drivers would ignore them, so the proxy keeps the member's counter shifted: replies gain the
 * shift, and the counter a driver sends back in an awaitable hello loses it again. The member's
 * replies go one further than the error: it said it stepped down, yet it is as it was, as if
 * elected again at once. A driver that took the error's counter for its next awaitable hello (the
 * Node.js driver does, when no hello of its monitor was waiting) is then answered at once, not
 * held for its maxAwaitTimeMS with the member Unknown; and one that hears the member's reply first
 * finds the error older than what it holds, and ignores it, as it would a real stepdown's.
 *
 * <p>A mongod's hello and legacy isMaster replies carry one processId. jongodb gives each its own,
 * and a driver's monitor follows one (hello) while its pool's handshakes see the other (isMaster):
 * an injected error naming the other processId is never stale to the driver, so, applied after the
 * monitor had already heard the member's new state, it left the member Unknown until the next
 * heartbeat. Clients are shown one processId per member, as mongod has: hello's, in the legacy
 * replies too, and the member's own is put back in a legacy request it is to read.
 *
 * <p>A member that blackpipe restarted ({@link #restarted}) is a new process to its clients, as a mongod that
 * restarts is: its replies and errors carry a processId it never had before (and its counter without the shift
 * the old process had), a driver's awaitable hello that names it has the member's own put back, and one that
 * still names the old process's is answered at once, as a new process answers a processId not its own.
 *
 * <p>A member may refuse what every mongod takes, or answer otherwise (jongodb: read preferences
 * other than primary, w:0, endSessions; a retried write run again, a duplicate key as the command's
 * error): its {@link MemberQuirks}, noted at start, say how its commands are sent so that it takes
 * them, answered in its place, or how its replies reach the client.
 */
public final class MemberStates {
    private record Shift(ObjectId processId, long amount) {
    }

    /** The processIds a member's hello and legacy isMaster replies carry: one (mongod) or two (jongodb). */
    private record ProcessIds(ObjectId hello, ObjectId legacy) {
        /** The legacy processId that clients are shown as hello's; null when the two are one. */
        ObjectId alias() {
            return hello != null && legacy != null && !hello.equals(legacy) ? legacy : null;
        }
    }

    private static final ProcessIds NONE_SEEN = new ProcessIds(null, null);

    /** After a restart: the processId of the member's replies ({@code own}) and the one its clients are shown instead. */
    private record NewProcess(ObjectId own, ObjectId shown) {
    }

    private final Map<MemberAddress, MemberState> states = new ConcurrentHashMap<>();
    private final Map<MemberAddress, Shift> shifts = new ConcurrentHashMap<>();
    /** Per member, the shifts of errors not announced yet to the hellos it holds (see {@link #newerUnannounced}). */
    private final Map<MemberAddress, Integer> unannounced = new ConcurrentHashMap<>();
    private final Map<MemberAddress, ProcessIds> processIds = new ConcurrentHashMap<>();
    private final Map<MemberAddress, NewProcess> newProcesses = new ConcurrentHashMap<>();
    private final Map<MemberAddress, MemberQuirks> quirks = new ConcurrentHashMap<>();
    /** Whether any member has quirks: what every command of a mongod pays is this read. */
    private volatile boolean anyQuirks;

    /** Notes what the member refuses that a mongod takes; false when nothing new. */
    public boolean noteQuirks(MemberAddress member, MemberQuirks noted) {
        if (!noted.any() || noted.equals(quirks.put(member, noted))) {
            return false;
        }
        anyQuirks = true;
        return true;
    }

    /** What the member refuses that a mongod takes: {@link MemberQuirks#NONE} for a mongod. */
    public MemberQuirks quirks(MemberAddress member) {
        return anyQuirks ? quirks.getOrDefault(member, MemberQuirks.NONE) : MemberQuirks.NONE;
    }

    /** Notes a hello reply of the member's, as the member sent it. */
    public void observe(MemberAddress member, BsonDocument hello) {
        observe(member, hello, false);
    }

    /** Notes a hello reply of the member's, as the member sent it, or (legacy) its reply to isMaster. */
    public void observe(MemberAddress member, BsonDocument hello, boolean legacy) {
        MemberState state = MemberState.fromHello(hello);
        if (state.hasTopologyVersion()) {
            ObjectId processId = state.processId();
            ProcessIds seen = processIds.getOrDefault(member, NONE_SEEN);
            if (!processId.equals(legacy ? seen.legacy() : seen.hello())) { // only when first seen, or after a restart
                seen = processIds.compute(member, (m, known) -> {
                    ProcessIds was = known == null ? NONE_SEEN : known;
                    return legacy ? new ProcessIds(was.hello(), processId) : new ProcessIds(processId, was.legacy());
                });
            }
            if (legacy && processId.equals(seen.alias())) {
                state = state.withProcessId(seen.hello());
            }
        }
        states.put(member, state);
    }

    public MemberState of(MemberAddress member) {
        return states.getOrDefault(member, MemberState.UNKNOWN);
    }

    /**
     * The topologyVersion an error from this member carries: the one drivers currently hold, or
     * (newer) one more, which shifts the member's counter from now on by two (the stepdown the
     * error announces, and the member as it still is). Null when the member never sent one.
     */
    public BsonDocument topologyVersion(MemberAddress member, boolean newer) {
        BsonDocument version = newer ? nextTopologyVersion(member) : shifted(member, 0);
        if (version != null && newer) {
            shiftTopologyVersion(member);
        }
        return version;
    }

    /**
     * As {@link #topologyVersion}(member, true), for an error whose news the hellos the member holds hear only at
     * {@link #announced}: until then, a driver's awaitable hello that holds the version from before the error is held
     * too, not answered at once with the shifted one. Else a streaming monitor could hear of the shift before the driver
     * read the error, which was then stale and ignored (no Unknown, no pool clear for a shutdown code).
     */
    public BsonDocument newerUnannounced(MemberAddress member) {
        BsonDocument version = topologyVersion(member, true);
        if (version != null) {
            unannounced.merge(member, 1, Integer::sum);
        }
        return version;
    }

    /** The hellos the member holds heard of the oldest error {@link #newerUnannounced} gave. */
    public void announced(MemberAddress member) {
        unannounced.computeIfPresent(member, (m, count) -> count > 1 ? count - 1 : null);
    }

    private void shiftTopologyVersion(MemberAddress member) {
        MemberState state = of(member);
        if (state.hasTopologyVersion()) {
            shifts.merge(member, new Shift(state.processId(), 2), (old, two) -> old.processId().equals(two.processId())
                    ? new Shift(old.processId(), old.amount() + 2) : two);
        }
    }

    /** The member's topologyVersion as drivers hold it (its counter shifted so far), its counter {@code beyond} more. */
    private BsonDocument shifted(MemberAddress member, int beyond) {
        MemberState state = of(member);
        if (!state.hasTopologyVersion()) {
            return null;
        }
        Shift shift = shifts.get(member);
        long amount = shift != null && shift.processId().equals(state.processId()) ? shift.amount() : 0;
        return new BsonDocument("processId", new BsonObjectId(shown(member, state.processId())))
                .append("counter", new BsonInt64(state.topologyCounter() + amount + beyond));
    }

    /**
     * The member exited for a restart that blackpipe made, and comes back as a new process: from now on its clients
     * are shown a processId they never saw, and its counter as it is, with no shift. Call it once the errors of its
     * exit are made (they carry the old process's). Does nothing for a member that never sent a topologyVersion.
     */
    public void restarted(MemberAddress member) {
        MemberState state = of(member);
        if (state.hasTopologyVersion()) {
            shifts.remove(member);
            newProcesses.put(member, new NewProcess(state.processId(), new ObjectId()));
        }
    }

    private ObjectId shown(MemberAddress member, ObjectId own) {
        NewProcess process = newProcesses.get(member);
        return process != null && process.own().equals(own) ? process.shown() : own;
    }

    /**
     * The topologyVersion one newer than drivers hold, without moving the member on: what a member that quiesces
     * sends in its ShutdownInProgress errors, and an injected state-change error until it is announced ({@link
     * #shiftTopologyVersion}). The member's own replies move past it once the quiesce ends ({@link #topologyVersion}
     * with newer), not before (see {@code MemberListener}). Null when the member never sent one.
     */
    public BsonDocument nextTopologyVersion(MemberAddress member) {
        return shifted(member, 1);
    }

    /** Gives a hello reply's (or an error reply's) topologyVersion the processId clients are shown, and the shift; true if it changed. */
    public boolean shiftReply(MemberAddress member, BsonDocument hello) {
        ProcessIds seen = processIds.get(member);
        boolean renamed = seen != null && seen.alias() != null && replaceProcessId(hello, seen.alias(), seen.hello());
        boolean shifted = shiftCounter(member, hello, 1);
        NewProcess process = newProcesses.get(member);
        boolean restarted = process != null && replaceProcessId(hello, process.own(), process.shown());
        return restarted | shifted | renamed;
    }

    /** Removes the shift from the topologyVersion a driver sends in an awaitable hello, and the processId it was shown; true if it changed. */
    public boolean unshiftRequest(MemberAddress member, BsonDocument hello) {
        NewProcess process = newProcesses.get(member);
        // the old process's: one the member's own (the same) would hold, so it is made one the member never had
        boolean restarted = process != null && (replaceProcessId(hello, process.own(), new ObjectId())
                | replaceProcessId(hello, process.shown(), process.own()));
        boolean unshifted = shiftCounter(member, hello, -1);
        ProcessIds seen = processIds.get(member);
        boolean legacy = !hello.isEmpty() && hello.getFirstKey().equalsIgnoreCase("isMaster");
        boolean renamed = legacy && seen != null && seen.alias() != null && replaceProcessId(hello, seen.hello(), seen.alias());
        return restarted | unshifted | renamed;
    }

    /** Whether this member's hello requests may need {@link #unshiftRequest}, and its error replies {@link #shiftReply}. */
    public boolean versionsRewritten(MemberAddress member) {
        ProcessIds seen = processIds.get(member);
        return shifts.containsKey(member) || seen != null && seen.alias() != null || newProcesses.containsKey(member);
    }

    private static boolean replaceProcessId(BsonDocument hello, ObjectId from, ObjectId to) {
        BsonValue value = hello.get("topologyVersion");
        if (value == null || !value.isDocument() || !value.asDocument().isObjectId("processId")
                || !value.asDocument().getObjectId("processId").getValue().equals(from)) {
            return false;
        }
        value.asDocument().put("processId", new BsonObjectId(to));
        return true;
    }

    private boolean shiftCounter(MemberAddress member, BsonDocument hello, int sign) {
        Shift shift = shifts.get(member);
        BsonValue value = hello.get("topologyVersion");
        if (shift == null || value == null || !value.isDocument()) {
            return false;
        }
        BsonDocument version = value.asDocument();
        if (!version.isObjectId("processId") || !version.getObjectId("processId").getValue().equals(shift.processId())
                || !version.isNumber("counter")) {
            return false;
        }
        // a request (sign -1) taken back by the shift its driver holds: with errors unannounced, the one from before them
        long amount = sign > 0 ? shift.amount() : shift.amount() - 2L * unannounced.getOrDefault(member, 0);
        long counter = version.getNumber("counter").longValue() + sign * amount;
        if (counter < 0) {
            // older than anything the member said since the shift began (a driver that missed a move): a
            // processId the member never had makes it answer at once, as the driver needs; 0 would be held
            version.put("processId", new BsonObjectId(new ObjectId()));
            counter = 0;
        } else if (sign < 0) {
            // Never past the member's own: with errors unannounced, a driver may hold more than the unshift takes back
            // (a reply shifted in full, an error's own counter), and mongod refuses a counter past its own (31382,
            // "greater than the server topology version counter"): its monitor saw an error, and a pool clear, no
            // rule made. At the member's own, the hello is held, as the driver's view is current.
            counter = Math.min(counter, of(member).topologyCounter());
        }
        version.put("counter", new BsonInt64(counter));
        return true;
    }
}
