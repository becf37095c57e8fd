package io.blackpipe.pipe;

import io.blackpipe.fault.ErrorCodes;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;

/**
 * A member's quiesce period, the first part of a clean shutdown since MongoDB 5.0: operations go on
 * as before, but every hello (a heartbeat, a handshake, one already waiting) is answered with
 * ShutdownInProgress, so that drivers stop selecting the member before it exits. As mongod's
 * answer, it carries the topologyVersion drivers hold, one newer, and how long the quiesce has left.
 *
 * @param topologyVersion the member's topologyVersion one newer than drivers hold (null: the member
 *                        sends none, and neither does its error)
 */
record Quiesce(BsonDocument topologyVersion, long endsAtNanos) {
    static Quiesce of(BsonDocument topologyVersion, long millis) {
        return new Quiesce(topologyVersion, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis));
    }

    /** mongod's answer to a hello while it quiesces: ShutdownInProgress, the time left, the topologyVersion. */
    BsonDocument helloError() {
        BsonDocument reply = new BsonDocument("ok", new BsonDouble(0))
                .append("errmsg", new BsonString("The server is in quiesce mode and will shut down"))
                .append("code", new BsonInt32(ErrorCodes.SHUTDOWN_IN_PROGRESS))
                .append("codeName", new BsonString(ErrorCodes.name(ErrorCodes.SHUTDOWN_IN_PROGRESS)))
                .append("remainingQuiesceTimeMillis", new BsonInt64(remainingMillis()));
        if (topologyVersion != null) {
            reply.append("topologyVersion", topologyVersion.clone());
        }
        return reply;
    }

    long remainingMillis() {
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(endsAtNanos - System.nanoTime()));
    }
}
