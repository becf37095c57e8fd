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
 * shift, and the counter a driver sends back in an awaitable hello loses it again.
 */
public final class MemberStates {
    private record Shift(ObjectId processId, long amount) {
    }

    private final Map<MemberAddress, MemberState> states = new ConcurrentHashMap<>();
    private final Map<MemberAddress, Shift> shifts = new ConcurrentHashMap<>();

    public void observe(MemberAddress member, BsonDocument hello) {
        states.put(member, MemberState.fromHello(hello));
    }

    public MemberState of(MemberAddress member) {
        return states.getOrDefault(member, MemberState.UNKNOWN);
    }

    /**
     * The topologyVersion an error from this member carries: the one drivers currently hold, or
     * (newer) one more, which shifts the member's counter from now on. Null when the member never
     * sent one.
     */
    public BsonDocument topologyVersion(MemberAddress member, boolean newer) {
        MemberState state = of(member);
        if (!state.hasTopologyVersion()) {
            return null;
        }
        Shift shift = newer
                ? shifts.merge(member, new Shift(state.processId(), 1), (old, one) -> old.processId().equals(one.processId())
                        ? new Shift(old.processId(), old.amount() + 1) : one)
                : shifts.get(member);
        long amount = shift != null && shift.processId().equals(state.processId()) ? shift.amount() : 0;
        return new BsonDocument("processId", new BsonObjectId(state.processId()))
                .append("counter", new BsonInt64(state.topologyCounter() + amount));
    }

    /** Adds the shift to a hello reply's topologyVersion; true if it changed. */
    public boolean shiftReply(MemberAddress member, BsonDocument hello) {
        return shiftCounter(member, hello, 1);
    }

    /** Removes the shift from the topologyVersion a driver sends in an awaitable hello; true if it changed. */
    public boolean unshiftRequest(MemberAddress member, BsonDocument hello) {
        return shiftCounter(member, hello, -1);
    }

    /** Whether hello requests of this member may need {@link #unshiftRequest}: only once a shift exists. */
    public boolean shifted(MemberAddress member) {
        return shifts.containsKey(member);
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
        long counter = version.getNumber("counter").longValue() + sign * shift.amount();
        if (counter < 0) {
            // older than anything the member said since the shift began (a driver that missed a move): a
            // processId the member never had makes it answer at once, as the driver needs; 0 would be held
            version.put("processId", new BsonObjectId(new ObjectId()));
            counter = 0;
        }
        version.put("counter", new BsonInt64(counter));
        return true;
    }
}
