package io.blackpipe.admin;

import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.topology.Member;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;

/**
 * The /health document: status, deployment kind, each member's addresses, and warnings when there are any (a history
 * file that stopped, or whose writer is stuck); written as every admin answer is (indented).
 */
final class Health {
    private Health() {
    }

    static BsonDocument document(ProxyServer proxy) {
        BsonArray members = new BsonArray();
        for (Member member : proxy.members()) {
            members.add(new BsonDocument("upstream", new BsonString(member.upstream().toString()))
                    .append("advertised", new BsonString(member.advertised().toString()))
                    .append("openConnections", new BsonInt32(proxy.openConnections(member.upstream()))));
        }
        BsonDocument health = new BsonDocument("status", new BsonString("ok"))
                .append("deployment", new BsonString(proxy.deployment().kind()))
                .append("connectionString", new BsonString(proxy.connectionString()))
                .append("members", members);
        // the proxy still serves (status ok: a probe must not restart it), but what it records is no longer whole: said
        // here as soon as it happens, not only in the exit status when the proxy stops
        String historyFailure = proxy.history().fileFailure();
        String historyWarning = historyFailure != null ? historyFailure : proxy.history().fileStuck();
        if (historyWarning != null) {
            health.append("warnings", new BsonArray(java.util.List.of(new BsonString(historyWarning))));
        }
        return health;
    }
}
