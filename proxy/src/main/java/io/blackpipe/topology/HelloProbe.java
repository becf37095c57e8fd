package io.blackpipe.topology;

import io.blackpipe.wire.BlockingCommandClient;
import io.blackpipe.wire.Tls;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.Locale;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The hello blackpipe asks a member itself, at start and before a failover, over a connection of
 * its own, and what it learns of the member's {@link MemberQuirks} on the way. The hello first
 * carries a read preference (primaryPreferred), as a driver's may (the Go driver's heartbeats do):
 * every mongod and mongos takes it, jongodb refuses every mode but primary, so a member that
 * refuses it and answers a plain hello takes only primary reads. Then a hello with writeConcern
 * w:0 and one with w:1: jongodb refuses w:0 on any command and takes w:1, where a mongod takes
 * both or neither (a command that takes no write concern). Last an endSessions of no session,
 * which a mongod answers ok (or Unauthorized, with access control) and jongodb does not have. A
 * member that refused any of these and is a writable primary is then asked how it takes two writes
 * ({@link WriteProbe}): whether it runs a retried write again, and how it refuses a duplicate key; and
 * such a member is asked its buildInfo, which tells jongodb by its version, whether it ends a transaction that
 * carries a read preference, and (a writable primary) whether a newer transaction of a session ends the open one
 * ({@link TransactionEndProbe}), and how it answers a legacy OP_QUERY find.
 * A mongod is never asked to write. A
 * server older than 4.4.2 knows only isMaster, and is asked nothing more.
 */
public final class HelloProbe {
    private static final BsonDocument HELLO = new BsonDocument("hello", new BsonInt32(1));
    private static final BsonDocument BUILD_INFO = new BsonDocument("buildInfo", new BsonInt32(1));
    private static final int COMMAND_NOT_FOUND = 59;
    /** The wire version of MongoDB 5.1, which removed OP_QUERY finds and OP_GET_MORE. */
    private static final int LEGACY_OPCODES_REMOVED = 14;
    private static final int QUERY_FAILURE = 2;
    /** How long a quirk's question waits first: jongodb answers in a millisecond, and a busy one is asked again (see ask). */
    private static final int QUIRK_REPLY_MILLIS = 1000;

    /**
     * The member's hello, and what it refused that a mongod takes.
     *
     * @param unanswered the question about its quirks the member did not answer (and why), the quirks after it
     *                   taken as none; null when it answered every one
     * @param slow       that question's wait ran out (a busy member), where the member did not close the connection
     */
    public record Answer(BsonDocument hello, MemberQuirks quirks, String unanswered, boolean slow) {
        public Answer(BsonDocument hello, MemberQuirks quirks) {
            this(hello, quirks, null, false);
        }

        public boolean complete() {
            return unanswered == null;
        }

        /** What a start says of a member that left a question unanswered. */
        public String unansweredWarning(MemberAddress member) {
            return "member " + member + " did not answer blackpipe's question about how it differs from mongod: " + unanswered
                    + "; it is taken to differ only as far as it answered, so where it is jongodb its clients may meet"
                    + " what blackpipe mends (a retried write applied twice, a refused w:0 write): start the proxy again"
                    + " once the member answers sooner";
        }

        /** This answer, asked again after {@code first}: what either found, and what each left unanswered. */
        private Answer after(Answer first) {
            return complete() ? this : new Answer(hello, quirks.or(first.quirks), first.unanswered + ", then, asked again, "
                    + unanswered, slow);
        }
    }

    private HelloProbe() {
    }

    /**
     * The member's hello alone (isMaster from a server before 4.4.2), without the quirk questions: for a
     * seed whose kind is all that is wanted now (a later mongos router, asked again with {@link #ask} once proxied).
     */
    public static BsonDocument hello(MemberAddress member, int timeoutMillis, Tls.Client tls) throws IOException {
        try (BlockingCommandClient client = new BlockingCommandClient(member.host(), member.port(), timeoutMillis, tls)) {
            BsonDocument hello = client.run("admin", HELLO);
            return isOk(hello) ? hello : client.run("admin", new BsonDocument("isMaster", new BsonInt32(1)));
        }
    }

    /**
     * The member's hello and quirks. The quirks' questions wait a second each: a member that answers hello but lets one
     * of them wait that long is asked them again on a new connection, each waiting {@code timeoutMillis}, as jongodb busy
     * with a large write of another client's took more than a second, and a start that took it for a mongod made its
     * clients meet what the quirks mend (a retried write applied twice). So a member that takes hellos alone, and
     * leaves the rest unanswered, holds a start (or a real set's failover, which asks again) up by {@code timeoutMillis}
     * more; one that closes the connection at them is not asked again.
     */
    public static Answer ask(MemberAddress member, int timeoutMillis, Tls.Client tls) throws IOException {
        Answer first = askOnce(member, timeoutMillis, tls, Math.min(timeoutMillis, QUIRK_REPLY_MILLIS));
        if (first.complete() || !first.slow() || timeoutMillis <= QUIRK_REPLY_MILLIS) {
            return first;
        }
        try {
            return askOnce(member, timeoutMillis, tls, timeoutMillis).after(first);
        } catch (IOException | RuntimeException e) { // it answered hello once: proxied as far as it answered then
            return new Answer(first.hello(), first.quirks(), first.unanswered() + ", then, asked again, no answer (" + e.getMessage()
                    + ")", true);
        }
    }

    private static Answer askOnce(MemberAddress member, int timeoutMillis, Tls.Client tls, int quirkReplyMillis) throws IOException {
        try (BlockingCommandClient client = new BlockingCommandClient(member.host(), member.port(), timeoutMillis, tls)) {
            BsonDocument hello = client.run("admin", with("$readPreference", new BsonDocument("mode", new BsonString("primaryPreferred"))));
            boolean primaryReadsOnly = false;
            if (!isOk(hello)) {
                hello = client.run("admin", HELLO);
                if (!isOk(hello)) {
                    return new Answer(client.run("admin", new BsonDocument("isMaster", new BsonInt32(1))), MemberQuirks.NONE);
                }
                primaryReadsOnly = true;
            }
            client.readTimeout(quirkReplyMillis);
            return quirks(client, hello, primaryReadsOnly);
        }
    }

    /**
     * The rest of the member's quirks. A member that answers hello is proxied whatever it makes of these: one that does
     * not answer them (a member that takes only hellos, a stuck one) is taken to have none it was not found to have,
     * and the answer names the question it left unanswered.
     */
    private static Answer quirks(BlockingCommandClient client, BsonDocument hello, boolean primaryReadsOnly) {
        boolean refusesUnacknowledged = false;
        boolean lacksEndSessions = false;
        String asking = "a hello with writeConcern w:0";
        try {
            refusesUnacknowledged = !isOk(client.run("admin", with("writeConcern", writeConcern(0))))
                    && isOk(client.run("admin", with("writeConcern", writeConcern(1))));
            asking = "endSessions";
            BsonDocument ended = client.run("admin", new BsonDocument("endSessions", new BsonArray()));
            lacksEndSessions = ended.isNumber("code") && ended.getNumber("code").intValue() == COMMAND_NOT_FOUND;
            boolean notMongod = primaryReadsOnly || refusesUnacknowledged || lacksEndSessions;
            if (!notMongod) {
                return new Answer(hello, MemberQuirks.NONE);
            }
            boolean primary = isWritablePrimary(hello);
            asking = "two writes to " + WriteProbe.DATABASE + "." + WriteProbe.COLLECTION;
            WriteProbe.Answer writes = primary ? WriteProbe.ask(client) : new WriteProbe.Answer(false, false);
            asking = "buildInfo";
            boolean commitRacesWrites = namesJongodb(client.run("admin", BUILD_INFO));
            asking = "the end of a transaction";
            boolean transactionEndsRefuseReadPreference = TransactionEndProbe.refusesReadPreference(client);
            boolean keepsSupersededTransactions = primary && TransactionEndProbe.keepsSupersededOpen(client);
            return new Answer(hello, new MemberQuirks(primaryReadsOnly, refusesUnacknowledged, lacksEndSessions,
                    writes.reappliesRetriedWrites(), writes.duplicateKeyAsCommandError(), commitRacesWrites,
                    transactionEndsRefuseReadPreference, keepsSupersededTransactions, answersLegacyQueriesAsCommands(client, hello)));
        } catch (IOException e) {
            return new Answer(hello, new MemberQuirks(primaryReadsOnly, refusesUnacknowledged, lacksEndSessions, false, false, false,
                    false, false, false), asking + " (" + e.getMessage() + ")", e instanceof SocketTimeoutException);
        }
    }

    /**
     * Whether buildInfo names jongodb (0.1.6 says version "8.0.0-jongodb"): its commit races the writes beside it, which
     * no question at start can show, since it takes two writes landing at once.
     */
    private static boolean namesJongodb(BsonDocument buildInfo) {
        BsonValue version = buildInfo.get("version");
        return version != null && version.isString() && version.asString().getValue().toLowerCase(Locale.ROOT).contains("jongodb");
    }

    /**
     * Whether a member whose wire version says 5.1 or later (which refuses a legacy OP_QUERY find with QueryFailure)
     * answers one as a command instead: its reply to a find of a namespace that is no $cmd is no failure but an ok: 0
     * document, as jongodb 0.1.6 answers "no such command". Asked last: a member that closes the connection at it keeps
     * the quirks already learnt.
     */
    private static boolean answersLegacyQueriesAsCommands(BlockingCommandClient client, BsonDocument hello) {
        BsonValue wire = hello.get("maxWireVersion");
        if (wire == null || !wire.isNumber() || wire.asNumber().intValue() < LEGACY_OPCODES_REMOVED) {
            return false;
        }
        try {
            BlockingCommandClient.LegacyReply reply = client.legacyFind("admin.blackpipe.legacy-probe");
            return (reply.responseFlags() & QUERY_FAILURE) == 0 && reply.first() != null && !isOk(reply.first());
        } catch (IOException e) {
            return false; // closed, or no reply soon: not the quirk this answers for
        }
    }

    /** Read leniently: a hello that says it oddly is not asked to write, and its member is proxied all the same. */
    private static boolean isWritablePrimary(BsonDocument hello) {
        BsonValue said = hello.containsKey("isWritablePrimary") ? hello.get("isWritablePrimary") : hello.get("ismaster");
        return BsonBoolean.TRUE.equals(said);
    }

    private static BsonDocument with(String field, BsonDocument value) {
        return HELLO.clone().append(field, value);
    }

    private static BsonDocument writeConcern(int w) {
        return new BsonDocument("w", new BsonInt32(w));
    }

    static boolean isOk(BsonDocument reply) {
        BsonValue ok = reply.get("ok");
        return ok != null && ok.isNumber() && ok.asNumber().doubleValue() == 1.0;
    }
}
