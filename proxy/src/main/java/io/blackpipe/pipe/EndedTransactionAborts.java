package io.blackpipe.pipe;

import io.blackpipe.fault.Plural;
import io.blackpipe.topology.Member;
import io.blackpipe.wire.AbortTransaction;
import io.blackpipe.wire.BlockingCommandClient;
import io.blackpipe.wire.Tls;
import io.blackpipe.wire.auth.AuthenticationException;
import io.blackpipe.wire.auth.Authenticator;
import io.blackpipe.wire.auth.Credential;
import java.io.IOException;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.bson.BsonDocument;
import org.bson.BsonInt32;

/**
 * Aborts on the one real node the transactions a simulated election ended. A primary that steps down aborts the
 * transactions open on it at once, whether their clients come back or not: their writes never apply, and what they
 * held is free for other clients. A client that comes back is answered as the new primary answers
 * ({@link FailoverEndedTransactions}); this ends on the node those whose clients never do, which it would otherwise
 * keep open until their lifetime limit (and commit, if asked straight). Over a connection of the proxy's own,
 * authenticated with the upstream URI's credentials when it has any: a session belongs to its user, so the
 * transactions of an app that authenticates as another user stay open (and the log says so).
 */
final class EndedTransactionAborts {
    private static final int NO_SUCH_TRANSACTION = 251;

    private final Credential credential;
    private final Tls.Client tls;
    private final int timeoutMillis;
    private final ProxyLog log;

    EndedTransactionAborts(Credential credential, Tls.Client tls, int timeoutMillis, ProxyLog log) {
        this.credential = credential;
        this.tls = tls;
        this.timeoutMillis = timeoutMillis;
        this.log = log;
    }

    /**
     * Aborts {@code ended} (each session's transaction number) on {@code node}, on a thread of its own (a failover
     * asked by rs.stepDown() comes on a connection's event loop, which must not wait for the node); done when the
     * future is. Nothing to abort: done at once, no connection made.
     */
    CompletableFuture<Void> abort(Member node, Map<UUID, Long> ended) {
        if (ended.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.runAsync(() -> abortNow(node, ended), task -> {
            Thread thread = new Thread(task, "blackpipe-failover-aborts");
            thread.setDaemon(true);
            thread.start();
        });
    }

    private void abortNow(Member node, Map<UUID, Long> ended) {
        int aborted = 0;
        int notOpen = 0;
        String refused = null;
        try (BlockingCommandClient client = Authenticator.connect(node.dial().host(), node.dial().port(), timeoutMillis, tls, credential)) {
            for (Map.Entry<UUID, Long> transaction : ended.entrySet()) {
                BsonDocument reply = client.run("admin", AbortTransaction.of(transaction.getKey(), transaction.getValue()));
                if (reply.getNumber("ok", new BsonInt32(0)).intValue() == 1) {
                    aborted++;
                } else if (reply.getNumber("code", new BsonInt32(-1)).intValue() == NO_SUCH_TRANSACTION) {
                    notOpen++; // its client came back first, or it is another user's session
                } else if (refused == null) {
                    refused = reply.toJson();
                }
            }
        } catch (IOException | AuthenticationException | RuntimeException e) {
            refused = e.getMessage();
        }
        log.info("failover (simulated): aborted " + Plural.of(aborted, "transaction") + " open on the old primary on the node"
                + (notOpen == 0 ? "" : "; " + notOpen + " no longer open there"));
        if (refused != null) {
            log.warn("failover (simulated): the node did not abort every transaction open on the old primary (" + refused
                    + "); those stay open there until their client's next command or their lifetime limit");
        }
    }
}
