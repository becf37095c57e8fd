package io.blackpipe.topology;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/**
 * What the proxy last heard a member say about itself in a hello reply: its role, wire version
 * and topologyVersion. Synthesized errors are shaped from it, as the real member would send them.
 */
public record MemberState(Role role, int maxWireVersion, ObjectId processId, long topologyCounter) {
    public enum Role { PRIMARY, SECONDARY, OTHER, UNKNOWN }

    public static final MemberState UNKNOWN = new MemberState(Role.UNKNOWN, 0, null, -1);

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
        return new MemberState(role, wire, processId, counter);
    }

    public boolean hasTopologyVersion() {
        return processId != null;
    }
}
