package io.blackpipe.pipe;

import io.blackpipe.topology.Member;
import io.blackpipe.wire.BlockingCommandClient;
import io.blackpipe.wire.Tls;
import io.blackpipe.wire.auth.AuthenticationException;
import io.blackpipe.wire.auth.Authenticator;
import io.blackpipe.wire.auth.Credential;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.UnaryOperator;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * mongod's answer to a batch insert that meets a duplicate key, made at a member that applies none of such a batch
 * ({@link io.blackpipe.topology.MemberQuirks#duplicateKeyAsCommandError}, jongodb: ok: 0, code 11000, nothing
 * inserted). mongod inserts the documents before the duplicate (ordered) or every other one (unordered) and answers
 * ok: 1 with n and each failed document in writeErrors by its index: what an app that inserts many and ignores the
 * duplicates counts on. So the batch is inserted again, in parts: a part the member takes is applied whole, one it
 * refuses is halved until the document that fails is alone, which becomes a write error; an ordered batch stops
 * there. A few round trips per duplicate, not one per document. Over a connection of the proxy's own, authenticated
 * with the upstream URI's credentials when it has any, on a thread of its own (the event loop must not wait).
 */
final class BatchInsertReruns {
    /** How long one part may take at the member: a large one is many documents. */
    private static final int READ_TIMEOUT_MILLIS = 60_000;
    /** The insert's options each part keeps; the rest (lsid, txnNumber, $clusterTime, ...) belong to the client's run. */
    private static final List<String> KEPT = List.of("writeConcern", "bypassDocumentValidation", "comment");

    private final Credential credential;
    private final Tls.Client tls;
    private final int connectTimeoutMillis;
    private final ExecutorService threads = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "blackpipe-batch-insert");
        thread.setDaemon(true);
        return thread;
    });

    BatchInsertReruns(Credential credential, Tls.Client tls, int connectTimeoutMillis) {
        this.credential = credential;
        this.tls = tls;
        this.connectTimeoutMillis = connectTimeoutMillis;
    }

    /** Inserts {@code insert}'s documents on {@code node} as mongod would have; completes with mongod's answer. */
    CompletableFuture<BsonDocument> rerun(Member node, String database, BsonDocument insert) {
        return CompletableFuture.supplyAsync(() -> {
            try (BlockingCommandClient client = Authenticator.connect(node.dial().host(), node.dial().port(), connectTimeoutMillis, tls,
                    credential)) {
                client.readTimeout(READ_TIMEOUT_MILLIS);
                return asMongodWould(insert, part -> {
                    try {
                        return client.run(database, part);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (AuthenticationException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
        }, threads);
    }

    /** The proxy closed: the threads end, a rerun under way once it is done (they outlived the proxy by a minute, idle). */
    void close() {
        threads.shutdown();
    }

    /**
     * mongod's answer to {@code insert} of two or more documents, which the member refused whole with a duplicate key,
     * made by inserting its documents in parts with {@code run} (which sends one insert command and returns its reply) at
     * a member that applies all of an insert's documents or none.
     */
    static BsonDocument asMongodWould(BsonDocument insert, UnaryOperator<BsonDocument> run) {
        Parts parts = new Parts(insert, run, insert.getBoolean("ordered", BsonBoolean.TRUE).getValue());
        parts.halve(0, insert.getArray("documents").size());
        BsonDocument answer = new BsonDocument("n", new BsonInt32(parts.inserted));
        if (!parts.writeErrors.isEmpty()) {
            answer.append("writeErrors", parts.writeErrors);
        }
        if (parts.writeConcernError != null) {
            answer.append("writeConcernError", parts.writeConcernError);
        }
        answer.append("ok", new BsonDouble(1));
        answer.putAll(parts.times);
        return answer;
    }

    /** The parts of one batch as they are inserted, and what they came to. */
    private static final class Parts {
        private final BsonDocument command;
        private final BsonArray documents;
        private final UnaryOperator<BsonDocument> run;
        private final boolean ordered;
        private int inserted;
        private final BsonArray writeErrors = new BsonArray();
        private BsonValue writeConcernError;
        /** The latest $clusterTime and operationTime a part was answered with: the latest write's. */
        private final BsonDocument times = new BsonDocument();

        Parts(BsonDocument insert, UnaryOperator<BsonDocument> run, boolean ordered) {
            this.command = insert;
            this.documents = insert.getArray("documents");
            this.run = run;
            this.ordered = ordered;
        }

        /** Inserts documents [from, to); false when an ordered batch stops there (a write error). */
        boolean insert(int from, int to) {
            BsonDocument reply = run.apply(part(from, to));
            if (reply.containsKey("writeConcernError")) {
                writeConcernError = reply.get("writeConcernError");
            }
            for (String time : List.of("$clusterTime", "operationTime")) {
                if (reply.containsKey(time)) {
                    times.put(time, reply.get(time));
                }
            }
            if (reply.getNumber("ok", new BsonInt32(0)).intValue() == 1) { // applied, as mongod answers: n, and each failure
                inserted += reply.getNumber("n", new BsonInt32(0)).intValue();
                BsonArray failed = reply.getArray("writeErrors", new BsonArray());
                for (BsonValue error : failed) {
                    BsonDocument moved = error.asDocument().clone();
                    moved.put("index", new BsonInt32(from + moved.getNumber("index", new BsonInt32(0)).intValue()));
                    writeErrors.add(moved);
                }
                return failed.isEmpty() || !ordered;
            }
            if (to - from > 1 && reply.getNumber("code", new BsonInt32(0)).intValue() == DuplicateKeys.CODE) {
                return halve(from, to); // none of it was applied
            }
            // a lone document failed, or the part for another reason than a document's (the member's state): as mongod
            // answers a batch it cannot go on with, an ordered one stops at it, an unordered one fails each of its documents
            for (int index = from; index < (ordered ? from + 1 : to); index++) {
                BsonValue document = documents.get(index);
                writeErrors.add(DuplicateKeys.writeError(index, reply, document.isDocument() ? document.asDocument() : null));
            }
            return !ordered;
        }

        /** Inserts documents [from, to), two or more that the member refused together, in two parts. */
        boolean halve(int from, int to) {
            int middle = (from + to) >>> 1;
            return insert(from, middle) && insert(middle, to);
        }

        private BsonDocument part(int from, int to) {
            BsonDocument part = new BsonDocument("insert", command.get("insert"))
                    .append("documents", new BsonArray(documents.subList(from, to))).append("ordered", BsonBoolean.TRUE);
            for (String option : KEPT) {
                if (command.containsKey(option)) {
                    part.append(option, command.get(option));
                }
            }
            return part;
        }
    }
}
