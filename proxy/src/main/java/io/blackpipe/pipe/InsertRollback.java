package io.blackpipe.pipe;

import io.blackpipe.fault.Plural;
import io.blackpipe.topology.Member;
import io.blackpipe.wire.BlockingCommandClient;
import io.blackpipe.wire.Tls;
import io.blackpipe.wire.auth.AuthenticationException;
import io.blackpipe.wire.auth.Authenticator;
import io.blackpipe.wire.auth.Credential;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Removes from the one real node the inserts a simulated failover rolls back ({@link UnreplicatedInserts}): the new
 * primary never had them, as after mongod's rollback, which sets such documents aside in its rollback files; here the
 * log names how many went from each namespace. Over a connection of the proxy's own, authenticated with the upstream
 * URI's credentials when it has any, on the failover's thread (never an event loop's: a client's rs.stepDown() rolls
 * nothing back).
 */
final class InsertRollback {
    /** _ids per delete command: well inside a command's 16 MB for any _id a driver makes. */
    private static final int IDS_PER_DELETE = 1_000;

    private final Credential credential;
    private final Tls.Client tls;
    private final int timeoutMillis;
    private final ProxyLog log;

    InsertRollback(Credential credential, Tls.Client tls, int timeoutMillis, ProxyLog log) {
        this.credential = credential;
        this.tls = tls;
        this.timeoutMillis = timeoutMillis;
        this.log = log;
    }

    /** Removes {@code taken} from {@code node}; returns how many documents it removed. */
    long rollBack(Member node, UnreplicatedInserts.Taken taken, long millis) {
        Map<String, List<BsonValue>> byNamespace = new LinkedHashMap<>();
        long withoutId = 0;
        for (SimulatedWrite insert : taken.inserts()) {
            List<BsonValue> ids = byNamespace.computeIfAbsent(insert.database() + "." + insert.collection(), ns -> new ArrayList<>());
            insert.ids().stream().filter(Objects::nonNull).forEach(ids::add);
            withoutId += insert.ids().stream().filter(Objects::isNull).count();
        }
        Map<String, Long> removed = new LinkedHashMap<>();
        String refused = null;
        if (!byNamespace.isEmpty()) {
            try (BlockingCommandClient client = new BlockingCommandClient(node.dial().host(), node.dial().port(), timeoutMillis, tls)) {
                if (credential != null) {
                    Authenticator.authenticate(client, credential);
                }
                for (Map.Entry<String, List<BsonValue>> namespace : byNamespace.entrySet()) {
                    removed.put(namespace.getKey(), remove(client, namespace.getKey(), namespace.getValue()));
                }
            } catch (IOException | AuthenticationException | RuntimeException e) {
                refused = e.getMessage();
            }
        }
        long total = removed.values().stream().mapToLong(Long::longValue).sum();
        log.info("failover (simulated): rolled back " + Plural.of(total, "inserted document") + " the old primary acknowledged"
                + " below majority in its last " + millis + " ms, as a member that had not replicated them"
                + (removed.isEmpty() ? "" : " (" + removed.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue())
                        .collect(Collectors.joining(", ")) + ")")
                + (withoutId == 0 ? "" : "; " + Plural.of(withoutId, "document") + " without an _id in the request stay (the"
                        + " member made their _id)")
                + (taken.forgotten() == 0 ? "" : "; " + Plural.of(taken.forgotten(), "older document") + " stay (blackpipe"
                        + " remembers " + UnreplicatedInserts.MAX_DOCUMENTS + ")"));
        if (refused != null) {
            log.warn("failover (simulated): the node did not remove every document rolled back (" + refused + "); those stay");
        }
        return total;
    }

    private static long remove(BlockingCommandClient client, String namespace, List<BsonValue> ids) throws IOException {
        int dot = namespace.indexOf('.');
        String database = namespace.substring(0, dot);
        String collection = namespace.substring(dot + 1);
        long removed = 0;
        for (int from = 0; from < ids.size(); from += IDS_PER_DELETE) {
            BsonDocument byId = new BsonDocument("_id", new BsonDocument("$in",
                    new BsonArray(ids.subList(from, Math.min(ids.size(), from + IDS_PER_DELETE)))));
            BsonDocument reply = client.run(database, new BsonDocument("delete", new BsonString(collection))
                    .append("deletes", new BsonArray(List.of(new BsonDocument("q", byId).append("limit", new BsonInt32(0))))));
            if (reply.getNumber("ok", new BsonInt32(0)).doubleValue() != 1) {
                throw new IllegalStateException("delete from " + namespace + " refused: " + reply.toJson());
            }
            removed += reply.getNumber("n", new BsonInt32(0)).longValue();
        }
        return removed;
    }
}
