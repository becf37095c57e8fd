package io.blackpipe.pipe;

import io.blackpipe.wire.BsonCursor;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.OpQuery;
import io.netty.buffer.ByteBuf;

/**
 * Whether a client connection said {@code helloOk: true}, as mongod keeps it per client
 * (Client::supportsHello): every hello or isMaster that carries a boolean helloOk sets it to that
 * value. mongod words its not-primary errors by it: "not primary" to such a client, "not master"
 * to one that never said it (a driver older than the hello command).
 */
final class ClientHelloOk {
    private boolean said;

    /** A hello or isMaster on its way to the member (or answered in its name). */
    void onHello(ByteBuf frame, OpMsg msg, OpQuery query) {
        BsonCursor body = msg != null ? msg.body(frame) : query.command(frame);
        if (body.find("helloOk") && body.type() == BsonCursor.BOOLEAN) {
            said = body.booleanValue();
        }
    }

    boolean said() {
        return said;
    }
}
