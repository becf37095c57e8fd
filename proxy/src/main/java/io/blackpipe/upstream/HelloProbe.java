package io.blackpipe.upstream;

import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import java.time.Duration;
import java.util.function.Predicate;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;

/**
 * Polls a freshly started server with hello until it says what we wait for. Printing a
 * "ready" line or opening a port is not proof the server answers commands; a hello reply is.
 */
final class HelloProbe {
    private static final int COMMAND_TIMEOUT_MILLIS = 5_000;
    /**
     * For {@link #runOk}: replSetInitiate and addShard do their work before they answer (addShard through a router
     * just started, the config servers and the shard's majority writes), on a CI machine that may run six servers on
     * two cores; neither can be sent again safely after a timeout.
     */
    static final int ADMIN_COMMAND_TIMEOUT_MILLIS = 120_000;
    private static final int COMMAND_NOT_FOUND = 59;

    /** Any ok:1 hello reply: the server accepts connections and runs commands. */
    static final Predicate<BsonDocument> ANSWERS = HelloProbe::isOk;

    /** The member is a writable primary. */
    static final Predicate<BsonDocument> WRITABLE_PRIMARY =
            reply -> isOk(reply) && reply.getBoolean("isWritablePrimary", BsonBoolean.FALSE).getValue();

    /** The member is a secondary (replicating, readable with secondary read preferences). */
    static final Predicate<BsonDocument> SECONDARY =
            reply -> isOk(reply) && reply.getBoolean("secondary", BsonBoolean.FALSE).getValue();

    private HelloProbe() {
    }

    /**
     * Sends hello to {@code host:port} until {@code condition} holds, the timeout passes, or
     * {@code process} dies; the error says which, with the last reply or connection error.
     */
    static BsonDocument await(String host, int port, Predicate<BsonDocument> condition, String waitingFor,
                              Duration timeout, ManagedProcess process) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String lastSeen = "no attempt yet";
        while (true) {
            if (process != null) {
                process.ensureAlive();
            }
            try (BlockingCommandClient client = new BlockingCommandClient(host, port, COMMAND_TIMEOUT_MILLIS)) {
                BsonDocument reply = hello(client);
                if (condition.test(reply)) {
                    return reply;
                }
                lastSeen = "last hello reply " + reply.toJson();
            } catch (IOException e) {
                lastSeen = "last attempt failed: " + e;
            }
            if (System.nanoTime() - deadline > 0) {
                String tail = process == null ? "" : process.outputTail();
                throw new IOException(host + ":" + port + " did not become " + waitingFor + " within "
                        + timeout.toSeconds() + "s (" + lastSeen + ")" + tail);
            }
            ManagedProcess.pause(100);
        }
    }

    /**
     * hello, or isMaster on servers older than 4.4.2 that lack hello; the legacy reply's "ismaster"
     * is copied to "isWritablePrimary" so callers read one field.
     */
    private static BsonDocument hello(BlockingCommandClient client) throws IOException {
        BsonDocument reply = client.run("admin", new BsonDocument("hello", new BsonInt32(1)));
        if (isOk(reply) || reply.getNumber("code", new BsonInt32(0)).intValue() != COMMAND_NOT_FOUND) {
            return reply;
        }
        BsonDocument legacy = client.run("admin", new BsonDocument("isMaster", new BsonInt32(1)));
        if (legacy.containsKey("ismaster") && !legacy.containsKey("isWritablePrimary")) {
            legacy.put("isWritablePrimary", legacy.get("ismaster"));
        }
        return legacy;
    }

    /** Runs one admin command and fails with the server's own message unless it replies ok:1. */
    static BsonDocument runOk(String host, int port, BsonDocument command) throws IOException {
        try (BlockingCommandClient client = new BlockingCommandClient(host, port, ADMIN_COMMAND_TIMEOUT_MILLIS)) {
            BsonDocument reply = client.run("admin", command);
            if (!isOk(reply)) {
                throw new IOException(command.getFirstKey() + " on " + host + ":" + port + " failed: " + reply.toJson());
            }
            return reply;
        }
    }

    private static boolean isOk(BsonDocument reply) {
        return reply.containsKey("ok") && reply.get("ok").isNumber() && reply.getNumber("ok").doubleValue() == 1.0;
    }
}
