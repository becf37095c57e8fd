package io.blackpipe.pipe;

import io.blackpipe.fault.ErrorCodes;
import io.blackpipe.fault.Plural;
import io.blackpipe.observe.CappedLabels;
import io.blackpipe.topology.Member;
import io.blackpipe.wire.BlockingCommandClient;
import io.blackpipe.wire.Tls;
import io.blackpipe.wire.auth.AuthenticationException;
import io.blackpipe.wire.auth.Authenticator;
import io.blackpipe.wire.auth.Credential;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Takes back on the one real node what a simulated failover rolls back ({@link UnreplicatedWrites}): each document the
 * old primary's writes below majority changed goes back to what it was before the first of them, as on the new primary,
 * which never had them: one they created is removed, one they changed or deleted is put back. mongod sets what it rolls
 * back aside in its rollback files; here the log says how many documents went back in each namespace. Over a connection
 * of the proxy's own, authenticated with the upstream URI's credentials when it has any, on the failover's thread (never
 * an event loop's: a client's rs.stepDown() rolls nothing back).
 */
final class WriteRollback {
    /** Statements per delete or update command: well inside a command's 16 MB for the documents a test writes. */
    private static final int STATEMENTS_PER_COMMAND = 500;

    private final UnreplicatedWrites unreplicated;
    private final Credential credential;
    private final Tls.Client tls;
    private final int timeoutMillis;
    private final ProxyLog log;
    private final MeterRegistry registry;
    /** A test that writes to a collection per case rolls back many: the meter's label is capped, as the apps' is. */
    private final CappedLabels namespaces = CappedLabels.namespaces();

    WriteRollback(UnreplicatedWrites unreplicated, Credential credential, Tls.Client tls, int timeoutMillis, ProxyLog log,
                  MeterRegistry registry) {
        this.unreplicated = unreplicated;
        this.credential = credential;
        this.tls = tls;
        this.timeoutMillis = timeoutMillis;
        this.log = log;
        this.registry = registry;
    }

    /** An election that rolls nothing back: the old primary's writes are replicated, none a later rollback reaches. */
    void forget() {
        unreplicated.takeForFailover(0);
    }

    /**
     * A failover that rolls back the last {@code millis} (0: nothing) of what the old primary's writes below majority did,
     * on {@code node}; returns how many documents went back.
     */
    long rollBack(Member node, long millis) {
        UnreplicatedWrites.Taken taken = unreplicated.takeForFailover(millis);
        return millis == 0 ? 0 : rollBack(node, taken, millis);
    }

    /** What goes back in one namespace: the documents to remove, and those to put back as they were. */
    private record Namespace(List<BsonValue> remove, List<BsonDocument> putBack) {
    }

    private long rollBack(Member node, UnreplicatedWrites.Taken taken, long millis) {
        Map<String, Map<BsonValue, UnreplicatedWrites.Change>> first = new LinkedHashMap<>();
        long withoutId = 0;
        for (UnreplicatedWrites.Change change : taken.changes()) {
            if (change.id() == null) {
                withoutId++;
            } else {
                first.computeIfAbsent(change.database() + "." + change.collection(), ns -> new LinkedHashMap<>())
                        .putIfAbsent(change.id(), change); // what it was before the first write the rollback reaches
            }
        }
        Map<String, Namespace> work = new LinkedHashMap<>();
        first.forEach((namespace, changes) -> {
            Namespace back = work.computeIfAbsent(namespace, ns -> new Namespace(new ArrayList<>(), new ArrayList<>()));
            changes.values().forEach(c -> {
                if (c.before() == null) {
                    back.remove().add(c.id());
                } else {
                    back.putBack().add(c.before());
                }
            });
        });
        Map<String, String> done = new LinkedHashMap<>();
        long removed = 0;
        long putBack = 0;
        String refused = null;
        if (!work.isEmpty()) {
            try (BlockingCommandClient client = Authenticator.connect(node.dial().host(), node.dial().port(), timeoutMillis, tls, credential)) {
                for (Map.Entry<String, Namespace> namespace : work.entrySet()) {
                    long gone = remove(client, namespace.getKey(), namespace.getValue().remove());
                    long back = putBack(client, namespace.getKey(), namespace.getValue().putBack());
                    removed += gone;
                    putBack += back;
                    Counter.builder("blackpipe.rolled.back.documents").description("Documents a simulated failover's rollback took back")
                            .tag("namespace", namespaces.label(namespace.getKey())).register(registry).increment(gone + back);
                    done.put(namespace.getKey(), gone + " removed, " + back + " put back");
                }
            } catch (IOException | AuthenticationException | RuntimeException e) {
                refused = e.getMessage();
            }
        }
        log.info("failover (simulated): rolled back the old primary's writes below majority of its last " + millis + " ms, as a"
                + " member that had not replicated them: removed " + Plural.of(removed, "document") + " they created, put back "
                + putBack + " they changed or deleted"
                + (done.isEmpty() ? "" : " (" + done.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue())
                        .collect(Collectors.joining("; ")) + ")")
                + (withoutId == 0 ? "" : "; " + Plural.of(withoutId, "document") + " inserted without an _id stay (the member"
                        + " made their _id)")
                + (taken.forgotten() == 0 ? "" : "; " + Plural.of(taken.forgotten(), "older change") + " stay (blackpipe"
                        + " remembers " + UnreplicatedWrites.MAX_DOCUMENTS + ")"));
        if (refused != null) {
            log.warn("failover (simulated): the node did not take back every document rolled back (" + refused + "); those stay");
        }
        return removed + putBack;
    }

    private static long remove(BlockingCommandClient client, String namespace, List<BsonValue> ids) throws IOException {
        long removed = 0;
        for (int from = 0; from < ids.size(); from += STATEMENTS_PER_COMMAND) {
            BsonDocument byId = new BsonDocument("_id", new BsonDocument("$in",
                    new BsonArray(ids.subList(from, Math.min(ids.size(), from + STATEMENTS_PER_COMMAND)))));
            removed += run(client, namespace, "delete", "deletes",
                    List.of(new BsonDocument("q", byId).append("limit", new BsonInt32(0)))).getNumber("n", new BsonInt32(0)).longValue();
        }
        return removed;
    }

    private static long putBack(BlockingCommandClient client, String namespace, List<BsonDocument> documents) throws IOException {
        long putBack = 0;
        for (int from = 0; from < documents.size(); from += STATEMENTS_PER_COMMAND) {
            List<BsonDocument> replacements = new ArrayList<>();
            for (BsonDocument before : documents.subList(from, Math.min(documents.size(), from + STATEMENTS_PER_COMMAND))) {
                replacements.add(new BsonDocument("q", new BsonDocument("_id", before.get("_id"))).append("u", before)
                        .append("upsert", BsonBoolean.TRUE));
            }
            BsonDocument reply = run(client, namespace, "update", "updates", replacements);
            putBack += reply.getNumber("n", new BsonInt32(0)).longValue(); // matched, and upserted: every one put back
        }
        return putBack;
    }

    private static BsonDocument run(BlockingCommandClient client, String namespace, String command, String statements,
                                    List<BsonDocument> each) throws IOException {
        int dot = namespace.indexOf('.');
        BsonDocument reply = client.run(namespace.substring(0, dot), new BsonDocument(command, new BsonString(namespace.substring(dot + 1)))
                .append(statements, new BsonArray(each)));
        if (reply.getNumber("ok", new BsonInt32(0)).doubleValue() != 1 || reply.containsKey("writeErrors")) {
            throw new IllegalStateException(refusal(command, namespace, reply));
        }
        return reply;
    }

    /**
     * Why the node refused a removal or put-back, by code and codeName alone: its errmsg (an E11000's above all) carries
     * the documents' key values, customer data that has no place in a log line.
     */
    static String refusal(String command, String namespace, BsonDocument reply) {
        String why;
        if (reply.isArray("writeErrors") && !reply.getArray("writeErrors").isEmpty() && reply.getArray("writeErrors").get(0).isDocument()) {
            int errors = reply.getArray("writeErrors").size();
            why = coded(reply.getArray("writeErrors").get(0).asDocument()) + (errors == 1 ? "" : " (first of " + errors + " write errors)");
        } else {
            why = coded(reply);
        }
        return command + " on " + namespace + " refused: " + why;
    }

    private static String coded(BsonDocument error) {
        if (!error.isNumber("code")) {
            return "no error code";
        }
        int code = error.getNumber("code").intValue();
        return "code " + code + " (" + (error.isString("codeName") ? error.getString("codeName").getValue() : ErrorCodes.name(code)) + ")";
    }
}
