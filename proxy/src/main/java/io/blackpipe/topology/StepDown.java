package io.blackpipe.topology;

import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/** A real failover: asks the primary to step down (replSetStepDown), as an operator would. */
public final class StepDown {
    private StepDown() {
    }

    /**
     * @param primary the address that reaches the current primary
     * @throws IllegalStateException when the server refuses, naming its reason
     */
    public static void stepDown(MemberAddress primary, int timeoutMillis) {
        stepDown(primary, timeoutMillis, io.blackpipe.wire.Tls.Client.OFF);
    }

    /** The same, over TLS when the upstream URI asks for it. */
    public static void stepDown(MemberAddress primary, int timeoutMillis, io.blackpipe.wire.Tls.Client tls) {
        BsonDocument command = new BsonDocument("replSetStepDown", new BsonInt32(10))
                .append("secondaryCatchUpPeriodSecs", new BsonInt32(5));
        try (BlockingCommandClient client = new BlockingCommandClient(primary.host(), primary.port(), timeoutMillis + 15_000, tls)) {
            BsonDocument reply = client.run("admin", command);
            BsonValue ok = reply.get("ok");
            if (ok == null || !ok.isNumber() || ok.asNumber().doubleValue() != 1.0) {
                throw new IllegalStateException("replSetStepDown on " + primary + " failed: " + reply.toJson());
            }
        } catch (IOException e) {
            // Servers before 4.2 close every connection when they step down; that is success too.
            if (!(e instanceof java.io.EOFException) && !(e instanceof java.net.SocketException)) {
                throw new IllegalStateException("replSetStepDown on " + primary + " failed: " + e.getMessage(), e);
            }
        }
    }
}
