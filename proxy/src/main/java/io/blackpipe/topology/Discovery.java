package io.blackpipe.topology;

import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/** Asks the upstream's seeds what they are, once at start, to know which listeners to open. */
public final class Discovery {
    /** What the first answering seed said about the deployment. */
    public record Deployment(String setName, List<MemberAddress> members, String kind,
                             Map<MemberAddress, MemberAddress> dialAliases, MemberAddress answered, BsonDocument hello) {
        public Deployment(String setName, List<MemberAddress> members, String kind) {
            this(setName, members, kind, Map.of(), null, null);
        }

        /** The same deployment, noting which member answered and what it said (its state is then known). */
        Deployment answeredBy(MemberAddress member, BsonDocument reply) {
            return new Deployment(setName, members, kind, dialAliases, member, reply);
        }

        public boolean isReplicaSet() {
            return setName != null;
        }
    }

    private Discovery() {
    }

    public static Deployment discover(UpstreamUri uri, int timeoutMillis) {
        List<String> failures = new ArrayList<>();
        io.blackpipe.wire.Tls.Client tls = uri.tls();
        for (MemberAddress seed : uri.seeds()) {
            try (BlockingCommandClient client = new BlockingCommandClient(seed.host(), seed.port(), timeoutMillis, tls)) {
                BsonDocument hello = client.run("admin", new BsonDocument("hello", new BsonInt32(1)));
                if (!isOk(hello)) { // servers before 4.4.2 / 5.0 know only isMaster
                    hello = client.run("admin", new BsonDocument("isMaster", new BsonInt32(1)));
                }
                Deployment deployment = describe(seed, hello, uri.directConnection());
                MemberAddress me = hello.isString("me") && deployment.isReplicaSet()
                        ? MemberAddress.parse(hello.getString("me").getValue()) : seed;
                return deployment.answeredBy(me, hello);
            } catch (IOException | RuntimeException e) {
                failures.add(seed + " (" + e.getMessage() + ")");
            }
        }
        throw new IllegalStateException("no upstream seed answered hello: " + String.join(", ", failures));
    }

    private static boolean isOk(BsonDocument reply) {
        BsonValue ok = reply.get("ok");
        return ok != null && ok.isNumber() && ok.asNumber().doubleValue() == 1.0;
    }

    static Deployment describe(MemberAddress seed, BsonDocument hello, boolean directConnection) {
        if (!hello.isString("setName")) {
            String kind = "isdbgrid".equals(hello.getString("msg", new org.bson.BsonString("")).getValue()) ? "mongos" : "standalone";
            return new Deployment(null, List.of(seed), kind);
        }
        if (directConnection && hello.isString("me")) {
            // The seed was dialled directly (e.g. a container's mapped port): the set may know it by a
            // name only its own network resolves, so that name is proxied by dialling the seed.
            MemberAddress me = MemberAddress.parse(hello.getString("me").getValue());
            return new Deployment(hello.getString("setName").getValue(), List.of(me),
                    "replica set member (direct connection)", Map.of(me, seed), null, null);
        }
        Set<MemberAddress> members = new LinkedHashSet<>();
        for (String list : new String[] {"hosts", "passives", "arbiters"}) {
            if (hello.isArray(list)) {
                for (BsonValue host : hello.getArray(list)) {
                    members.add(MemberAddress.parse(host.asString().getValue()));
                }
            }
        }
        if (members.isEmpty()) {
            members.add(seed); // a member not yet initiated lists no hosts; proxy the one we reached
        }
        return new Deployment(hello.getString("setName").getValue(), new ArrayList<>(members), "replica set", Map.of(), null, null);
    }
}
