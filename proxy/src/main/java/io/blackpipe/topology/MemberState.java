package io.blackpipe.topology;

import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/**
 * What the proxy last heard a member say about itself in a hello reply: its role, wire version,
 * topologyVersion, and its clock. Synthesized errors are shaped from it, as the real member would send them.
 *
 * @param times the hello's $clusterTime and operationTime, which a replica-set member's mongod puts on every reply,
 *              errors included (after the body, as metadata); empty when the hello carried none (a standalone). Never
 *              changed: its accessor gives a copy, as each error it goes into may be changed after (a rule's extra
 *              information, a rewrite of the reply's body).
 */
public record MemberState(Role role, int maxWireVersion, ObjectId processId, long topologyCounter, BsonDocument times) {
    public enum Role { PRIMARY, SECONDARY, OTHER, UNKNOWN }

    private static final List<String> CLOCK_FIELDS = List.of("$clusterTime", "operationTime");

    public static final MemberState UNKNOWN = new MemberState(Role.UNKNOWN, 0, null, -1);

    /** A member whose hello carried no clock. */
    public MemberState(Role role, int maxWireVersion, ObjectId processId, long topologyCounter) {
        this(role, maxWireVersion, processId, topologyCounter, new BsonDocument());
    }

    public static MemberState fromHello(BsonDocument hello) {
        Role role = Role.OTHER;
        if (hello.getBoolean("isWritablePrimary", hello.getBoolean("ismaster", org.bson.BsonBoolean.FALSE)).getValue()) {
            role = Role.PRIMARY;
        } else if (hello.getBoolean("secondary", org.bson.BsonBoolean.FALSE).getValue()) {
            role = Role.SECONDARY;
        }
        int wire = hello.isNumber("maxWireVersion") ? hello.getNumber("maxWireVersion").intValue() : 0;
        ObjectId processId = null;
        long counter = -1;
        BsonValue tv = hello.get("topologyVersion");
        if (tv != null && tv.isDocument()) {
            BsonDocument version = tv.asDocument();
            if (version.isObjectId("processId")) {
                processId = version.getObjectId("processId").getValue();
            }
            if (version.isNumber("counter")) {
                counter = version.getNumber("counter").longValue();
            }
        }
        BsonDocument times = new BsonDocument();
        for (String field : CLOCK_FIELDS) {
            if (hello.containsKey(field)) {
                times.append(field, hello.get(field));
            }
        }
        return new MemberState(role, wire, processId, counter, times.clone()); // a copy: the hello goes on to its client
    }

    /**
     * The member's $clusterTime and operationTime as its latest hello said them, copied, for an error made in its name.
     * They are as old as that hello: a driver keeps the greatest it was told, so an older one changes nothing.
     */
    @Override
    public BsonDocument times() {
        return times.clone();
    }

    /** This state under another processId (a legacy isMaster's alias of the hello's), the rest kept. */
    MemberState withProcessId(ObjectId processId) {
        return new MemberState(role, maxWireVersion, processId, topologyCounter, times);
    }

    public boolean hasTopologyVersion() {
        return processId != null;
    }
}
