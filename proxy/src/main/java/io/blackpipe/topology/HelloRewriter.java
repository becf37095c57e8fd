package io.blackpipe.topology;

import io.blackpipe.wire.CommandFacts;
import java.util.function.Consumer;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Makes hello/isMaster conversations name the proxy instead of the real members, so a driver's
 * discovery (SDAM) only ever dials the proxy's listeners; the other replies that describe the set
 * ({@link SetDescriptions}) name the members the same way, so a user or a tool reading them sees
 * what the driver sees. It also steers compression off: the proxy reads commands, so the
 * handshake's compressor list is removed and the server never agrees to compress (documented in
 * the README).
 */
public final class HelloRewriter {
    private static final String[] HOST_LISTS = {"hosts", "passives", "arbiters"};
    private static final String[] HOST_FIELDS = {"primary", "me"};
    /**
     * Where replSetGetStatus names members, in the reply and in each of its members: the sync
     * source (syncingTo is its name before 4.4) and, in members, the member itself.
     */
    private static final String[] STATUS_HOST_FIELDS = {"syncSourceHost", "syncingTo"};
    private static final String[] STATUS_MEMBER_HOST_FIELDS = {"name", "syncSourceHost", "syncingTo"};

    private final MemberMap members;
    private final boolean replicaSet;
    private final Consumer<String> warnings;
    /** Hosts already warned of: rs.status() or serverStatus polled each second would repeat the warning each time. */
    private final java.util.Set<String> unproxiable = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final SetDescriptions.View namingTheProxy = new NamingTheProxy();

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

    /** Whether member addresses are rewritten at all: false for a standalone or mongos upstream (their hellos name no members). */
    public boolean rewritesAddresses() {
        return replicaSet;
    }

    /** Rewrites a hello reply in place; returns whether anything changed. */
    public boolean rewriteReply(BsonDocument reply) {
        boolean changed = reply.remove("compression") != null;
        return replicaSet ? helloHosts(reply) | changed : changed;
    }

    /**
     * Rewrites the reply to a command that {@link SetDescriptions#describesTheSet} in place, every
     * member it names mapped as hello's are; returns whether anything changed. Where a real
     * 6.0-8.0 server names members: replSetGetStatus's syncSourceHost and, in each of its members,
     * name and syncSourceHost (and the sync source of each initial sync attempt, while one runs);
     * replSetGetConfig's and local.system.replset's members' host; serverStatus's repl section,
     * hello's fields and (with {@code repl: 1} or more) replicationProgress's host. Free text
     * (infoMessage, lastHeartbeatMessage) is left as the server wrote it.
     */
    public boolean rewriteSetDescription(CommandFacts command, BsonDocument reply) {
        return replicaSet && SetDescriptions.rewrite(command, reply, namingTheProxy);
    }

    /**
     * A replica set configuration sent through the proxy ({@code replSetReconfig} or {@code
     * replSetInitiate}: {@code command} is its name, its value the config) names the members as the
     * member knows them: rs.conf() through the proxy shows the proxy's addresses, and mongosh's
     * rs.add, rs.reconfig(rs.conf()) send that config back whole; written to the set as they are,
     * the members would replicate through the proxy, and lose each other when it stops. A host the
     * proxy does not advertise is left as written. False when nothing was changed.
     */
    public boolean namingTheMembers(String command, BsonDocument body) {
        BsonValue config = body.get(command);
        if (!replicaSet || config == null || !config.isDocument() || !config.asDocument().isArray("members")) {
            return false;
        }
        boolean changed = false;
        for (BsonValue entry : config.asDocument().getArray("members")) {
            if (entry.isDocument() && entry.asDocument().isString("host")) {
                Member member = byAdvertised(entry.asDocument().getString("host").getValue());
                if (member != null) {
                    entry.asDocument().put("host", new BsonString(member.upstream().toString()));
                    changed = true;
                }
            }
        }
        return changed;
    }

    private Member byAdvertised(String host) {
        try {
            return members.byAdvertised(MemberAddress.parse(host));
        } catch (RuntimeException notAnAddress) {
            return null; // the member refuses it in its own words
        }
    }

    private final class NamingTheProxy implements SetDescriptions.View {
        @Override
        public boolean status(BsonDocument status) {
            boolean changed = fields(status, STATUS_HOST_FIELDS) | entries(status, "members", STATUS_MEMBER_HOST_FIELDS);
            if (status.isDocument("initialSyncStatus")) {
                changed |= entries(status.getDocument("initialSyncStatus"), "initialSyncAttempts", "syncSource");
            }
            return changed;
        }

        @Override
        public boolean config(BsonDocument config) {
            return entries(config, "members", "host");
        }

        @Override
        public boolean repl(BsonDocument repl) {
            return helloHosts(repl) | entries(repl, "replicationProgress", "host");
        }
    }

    /** Hello's member names: its host lists, primary and me. */
    private boolean helloHosts(BsonDocument hello) {
        boolean changed = false;
        for (String list : HOST_LISTS) {
            BsonValue value = hello.get(list);
            if (value != null && value.isArray()) {
                BsonArray hosts = value.asArray();
                for (int i = 0; i < hosts.size(); i++) {
                    BsonValue host = hosts.get(i);
                    if (host.isString()) {
                        BsonString proxied = advertised(host.asString());
                        if (proxied != host) {
                            hosts.set(i, proxied);
                            changed = true;
                        }
                    }
                }
            }
        }
        return fields(hello, HOST_FIELDS) | changed;
    }

    /** The string fields of {@code document} that name a member; an empty one (no sync source) names none. */
    private boolean fields(BsonDocument document, String... hostFields) {
        boolean changed = false;
        for (String field : hostFields) {
            BsonValue value = document.get(field);
            if (value != null && value.isString() && !value.asString().getValue().isEmpty()) {
                BsonString proxied = advertised(value.asString());
                if (proxied != value) {
                    document.put(field, proxied);
                    changed = true;
                }
            }
        }
        return changed;
    }

    /** {@link #fields} of every document in {@code document}'s array {@code array}. */
    private boolean entries(BsonDocument document, String array, String... hostFields) {
        BsonValue value = document.get(array);
        boolean changed = false;
        if (value != null && value.isArray()) {
            for (BsonValue entry : value.asArray()) {
                changed |= entry.isDocument() && fields(entry.asDocument(), hostFields);
            }
        }
        return changed;
    }

    /** The proxy's address for {@code host}, or {@code host} itself (the same instance) when it cannot be proxied or is already it. */
    private BsonString advertised(BsonString host) {
        try {
            String proxied = members.ensure(MemberAddress.parse(host.getValue())).advertised().toString();
            return proxied.equals(host.getValue()) ? host : new BsonString(proxied);
        } catch (RuntimeException e) {
            // Leaving the real address would let the driver bypass the proxy; the failure is loud instead.
            if (unproxiable.add(host.getValue())) {
                warnings.accept("cannot proxy member " + host.getValue() + ": " + e.getMessage());
            }
            return host;
        }
    }
}
