package io.blackpipe.admin;

import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.topology.Member;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;

/** The /health document: status, deployment kind and each member's addresses; written as every admin answer is (indented). */
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
        return health;
    }
}
