package io.blackpipe.topology;

import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/** Asks the upstream's seeds what they are, once at start, to know which listeners to open. */
public final class Discovery {
    private static final String MONGOS = "mongos";

    /**
     * What the first usable seed said about the deployment.
     *
     * @param quirks what the member that answered refuses that a mongod takes (see {@link HelloProbe})
     */
    public record Deployment(String setName, List<MemberAddress> members, String kind,
                             Map<MemberAddress, MemberAddress> dialAliases, MemberAddress answered, BsonDocument hello,
                             MemberQuirks quirks) {
        public Deployment(String setName, List<MemberAddress> members, String kind) {
            this(setName, members, kind, Map.of(), null, null, MemberQuirks.NONE);
        }

        /** The same deployment, noting which member answered and what it said (its state is then known). */
        Deployment answeredBy(MemberAddress member, HelloProbe.Answer answer) {
            return new Deployment(setName, members, kind, dialAliases, member, answer.hello(), answer.quirks());
        }

        public boolean isReplicaSet() {
            return setName != null;
        }

        /** The connection string an application uses to reach this deployment through {@code advertised}. */
        public String connectionString(List<Member> advertised, boolean tls) {
            String hosts = advertised.stream().map(m -> m.advertised().toString()).collect(java.util.stream.Collectors.joining(","));
            if (isReplicaSet()) {
                return "mongodb://" + hosts + "/?replicaSet=" + setName + (tls ? "&tls=true" : "");
            }
            return "mongodb://" + hosts + "/" + (tls ? "?tls=true" : "");
        }
    }

    private Discovery() {
    }

    /**
     * The deployment the first usable seed belongs to. A seed is passed over as a driver passes it
     * over (the Server Discovery and Monitoring spec removes it from the topology): with replicaSet=
     * in the URI, one that reports another set, or none; without it but with several seeds, a
     * standalone (a lone seed that is one is proxied). Each seed passed over before the one used is
     * logged; when none is left the start fails, naming what each seed reported.
     *
     * @param warn where each seed passed over is said, once a later seed is used
     * @throws IllegalStateException when no seed answered, or none is usable
     */
    public static Deployment discover(UpstreamUri uri, int timeoutMillis, Consumer<String> warn) {
        List<String> failures = new ArrayList<>();
        List<String> unusable = new ArrayList<>();
        List<String> passedOver = new ArrayList<>();
        io.blackpipe.wire.Tls.Client tls = uri.tls();
        if (tls.enabled()) {
            tls.context(); // a TLS file that cannot be used is the URI's fault, not any seed's: named alone, before a dial
        }
        for (MemberAddress seed : uri.seeds()) {
            try {
                HelloProbe.Answer answer = HelloProbe.ask(seed, timeoutMillis, tls);
                BsonDocument hello = answer.hello();
                String unfit = unfit(uri, hello);
                if (unfit != null) {
                    unusable.add(seed + " " + unfit);
                    passedOver.add("upstream seed " + seed + " passed over: it " + unfit + (uri.replicaSet() == null
                            ? ", which a driver given several seeds does not use" : ", and the URI names "
                            + uri.describeOption("replicaSet")));
                    continue;
                }
                Deployment deployment = describe(seed, hello, uri.directConnection());
                MemberAddress me = hello.isString("me") && deployment.isReplicaSet()
                        ? MemberAddress.parse(hello.getString("me").getValue()) : seed;
                passedOver.forEach(line -> warn.accept(line + "; using " + seed));
                if (!answer.complete()) {
                    warn.accept(answer.unansweredWarning(seed));
                }
                if (deployment.kind().equals(MONGOS) && !uri.directConnection()) {
                    deployment = withOtherRouters(deployment, uri, timeoutMillis, warn);
                }
                return deployment.answeredBy(me, answer);
            } catch (IOException | RuntimeException e) {
                failures.add(seed + " (" + why(e, tls) + ")");
                passedOver.add("upstream seed " + seed + " passed over: no answer to hello (" + why(e, tls) + ")");
            }
        }
        if (unusable.isEmpty()) {
            throw new IllegalStateException("no upstream seed answered hello: " + String.join(", ", failures));
        }
        String unanswered = failures.isEmpty() ? "" : "; no answer from " + String.join(", ", failures);
        if (uri.replicaSet() != null) {
            throw new IllegalStateException("no upstream seed is a member of the replica set the URI names ("
                    + uri.describeOption("replicaSet") + "): " + String.join("; ", unusable) + unanswered
                    + ". A driver given this URI would use none of them: correct replicaSet, or leave it out to proxy"
                    + " whatever the seeds report");
        }
        throw new IllegalStateException("no upstream seed can be proxied: " + String.join("; ", unusable) + unanswered
                + ". A driver given several seeds uses no standalone (the Server Discovery and Monitoring spec removes it"
                + " from the topology): give a standalone's address alone to proxy it");
    }

    /**
     * A sharded cluster's URI lists several mongos, and a driver spreads operations over them (and
     * retries a write on another): each later seed that is a mongos too is proxied on a listener of
     * its own. A seed that is something else is passed over, as a driver removes it from a sharded
     * topology; one that does not answer is passed over too, since what it is cannot be known yet.
     */
    private static Deployment withOtherRouters(Deployment first, UpstreamUri uri, int timeoutMillis, Consumer<String> warn) {
        List<MemberAddress> routers = new ArrayList<>(first.members());
        List<MemberAddress> seeds = uri.seeds();
        for (MemberAddress seed : seeds.subList(seeds.indexOf(first.members().get(0)) + 1, seeds.size())) {
            try {
                BsonDocument hello = HelloProbe.hello(seed, timeoutMillis, uri.tls()); // MemberRoles asks the rest
                if (hello.isString("setName") || !kindWithoutSet(hello).equals(MONGOS)) {
                    warn.accept("upstream seed " + seed + " passed over: it is a " + (hello.isString("setName") ? "replica set member"
                            : kindWithoutSet(hello)) + ", not a mongos as " + routers.get(0) + " is, and a driver removes it"
                            + " from a sharded cluster's topology");
                } else if (!routers.contains(seed)) {
                    routers.add(seed);
                }
            } catch (IOException | RuntimeException e) {
                warn.accept("upstream seed " + seed + " passed over: no answer to hello (" + why(e, uri.tls()) + "); start"
                        + " blackpipe again once it answers to proxy it too");
            }
        }
        return new Deployment(null, List.copyOf(routers), MONGOS);
    }

    /**
     * Why a seed did not answer; an unknown host's exception says no more than the host's name, and a
     * server that closes a plain connection unanswered is most often one that requires TLS.
     */
    private static String why(Exception e, io.blackpipe.wire.Tls.Client tls) {
        if (e instanceof UnknownHostException) {
            return "unknown host " + e.getMessage();
        }
        if (e instanceof BlockingCommandClient.ClosedWithoutReplyException && !tls.enabled()) {
            return e.getMessage() + ", as a server that requires TLS does to a client without it: add tls=true to the URI if so";
        }
        return e.getMessage();
    }

    /**
     * Why a driver given this URI would pass the seed over ("reports setName 'x'", "is a standalone
     * ..."), or null when it would use it.
     */
    private static String unfit(UpstreamUri uri, BsonDocument hello) {
        if (uri.replicaSet() != null) {
            return notInSet(uri.replicaSet(), hello);
        }
        boolean standalone = !hello.isString("setName") && !org.bson.BsonBoolean.TRUE.equals(hello.get("isreplicaset"))
                && kindWithoutSet(hello).equals("standalone");
        return standalone && uri.seeds().size() > 1 ? "is a standalone (its hello has no setName)" : null;
    }

    /**
     * What a seed that is not a member of {@code required} is instead ("reports setName 'x'", "is a
     * standalone ..."), or null when it is one, or when no set is required.
     */
    static String notInSet(String required, BsonDocument hello) {
        if (required == null) {
            return null;
        }
        if (hello.isString("setName")) {
            String reported = hello.getString("setName").getValue();
            return reported.equals(required) ? null : "reports setName '" + reported + "'";
        }
        if (org.bson.BsonBoolean.TRUE.equals(hello.get("isreplicaset"))) {
            return "is a replica set member not yet initiated (its hello has isreplicaset: true and no setName)";
        }
        return "is a " + kindWithoutSet(hello) + " (its hello has no setName)";
    }

    /** What a server whose hello names no set is: a mongos (msg: isdbgrid) or a standalone. */
    private static String kindWithoutSet(BsonDocument hello) {
        return "isdbgrid".equals(hello.getString("msg", new org.bson.BsonString("")).getValue()) ? MONGOS : "standalone";
    }

    static Deployment describe(MemberAddress seed, BsonDocument hello, boolean directConnection) {
        if (!hello.isString("setName")) {
            return new Deployment(null, List.of(seed), kindWithoutSet(hello));
        }
        if (directConnection && hello.isString("me")) {
            // The seed was dialled directly (e.g. a container's mapped port): the set may know it by a
            // name only its own network resolves, so that name is proxied by dialling the seed.
            MemberAddress me = MemberAddress.parse(hello.getString("me").getValue());
            return new Deployment(hello.getString("setName").getValue(), List.of(me),
                    "replica set member (direct connection)", Map.of(me, seed), null, null, MemberQuirks.NONE);
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
        return new Deployment(hello.getString("setName").getValue(), new ArrayList<>(members), "replica set", Map.of(), null, null, MemberQuirks.NONE);
    }
}
