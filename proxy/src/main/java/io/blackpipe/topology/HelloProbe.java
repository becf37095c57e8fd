package io.blackpipe.topology;

import io.blackpipe.wire.BlockingCommandClient;
import io.blackpipe.wire.Tls;
import java.io.IOException;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The hello blackpipe asks a member itself, at start and before a failover, over a connection of
 * its own. It first carries a read preference (primaryPreferred), as a driver's may (the Go
 * driver's heartbeats do): every mongod and mongos takes it, jongodb refuses every mode but primary.
 * A member that refuses it and answers a plain hello takes only primary reads, and the proxy drops
 * such read preferences on their way to it ({@link MemberStates#refusesReadPreferences}). A server
 * older than 4.4.2 knows only isMaster.
 */
public final class HelloProbe {
    private static final BsonDocument HELLO = new BsonDocument("hello", new BsonInt32(1));
    private static final BsonDocument HELLO_WITH_READ_PREFERENCE = new BsonDocument("hello", new BsonInt32(1))
            .append("$readPreference", new BsonDocument("mode", new BsonString("primaryPreferred")));

    /** The member's hello, and whether it refused the one with a read preference. */
    public record Answer(BsonDocument hello, boolean primaryReadsOnly) {
    }

    private HelloProbe() {
    }

    public static Answer ask(MemberAddress member, int timeoutMillis, Tls.Client tls) throws IOException {
        try (BlockingCommandClient client = new BlockingCommandClient(member.host(), member.port(), timeoutMillis, tls)) {
            BsonDocument hello = client.run("admin", HELLO_WITH_READ_PREFERENCE);
            if (isOk(hello)) {
                return new Answer(hello, false);
            }
            BsonDocument plain = client.run("admin", HELLO);
            if (isOk(plain)) {
                return new Answer(plain, true);
            }
            return new Answer(client.run("admin", new BsonDocument("isMaster", new BsonInt32(1))), false);
        }
    }

    private static boolean isOk(BsonDocument reply) {
        BsonValue ok = reply.get("ok");
        return ok != null && ok.isNumber() && ok.asNumber().doubleValue() == 1.0;
    }
}
