package io.blackpipe.topology;

import java.util.function.Consumer;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Makes hello/isMaster conversations name the proxy instead of the real members, so a driver's
 * discovery (SDAM) only ever dials the proxy's listeners. It also steers compression off: the
 * proxy reads commands, so the handshake's compressor list is removed and the server never
 * agrees to compress (documented in the README).
 */
public final class HelloRewriter {
    private static final String[] HOST_LISTS = {"hosts", "passives", "arbiters"};
    private static final String[] HOST_FIELDS = {"primary", "me"};

    private final MemberMap members;
    private final boolean replicaSet;
    private final Consumer<String> warnings;

    /** With {@code replicaSet} false (standalone, mongos) addresses are left alone. */
    public HelloRewriter(MemberMap members, boolean replicaSet, Consumer<String> warnings) {
        this.members = members;
        this.replicaSet = replicaSet;
        this.warnings = warnings;
    }

    /** Removes the handshake's compressor list, so the server agrees to none. */
    public static void stripCompression(BsonDocument handshake) {
        handshake.remove("compression");
    }

    /** Rewrites a hello reply in place; returns whether anything changed. */
    public boolean rewriteReply(BsonDocument reply) {
        boolean changed = reply.remove("compression") != null;
        if (!replicaSet) {
            return changed;
        }
        for (String list : HOST_LISTS) {
            BsonValue value = reply.get(list);
            if (value != null && value.isArray()) {
                BsonArray rewritten = new BsonArray();
                for (BsonValue host : value.asArray()) {
                    rewritten.add(host.isString() ? advertised(host.asString()) : host);
                }
                reply.put(list, rewritten);
                changed = true;
            }
        }
        for (String field : HOST_FIELDS) {
            BsonValue value = reply.get(field);
            if (value != null && value.isString()) {
                reply.put(field, advertised(value.asString()));
                changed = true;
            }
        }
        return changed;
    }

    private BsonString advertised(BsonString host) {
        try {
            return new BsonString(members.ensure(MemberAddress.parse(host.getValue())).advertised().toString());
        } catch (RuntimeException e) {
            // Leaving the real address would let the driver bypass the proxy; the failure is loud instead.
            warnings.accept("cannot proxy member " + host.getValue() + ": " + e.getMessage());
            return host;
        }
    }
}
