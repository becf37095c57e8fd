package io.blackpipe.pipe;

import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;

/**
 * A member's reply on its way to the client, counted as the client gets it: delivered as it is sent, or, while the
 * link to the client is slow or narrow ({@link ClientLink}), once its last byte arrives; a reply lost before that (a
 * reset cut it, the client left, having waited longer than its socket timeout) ends its command in a network error,
 * as the client sees it, so that the read a driver sends again then is counted as the retry it is.
 */
record CountedReply(Exchange exchange, InFlight command, ReplyFacts reply) implements Delivery {
    static void send(Exchange exchange, InFlight command, ReplyFacts reply, ByteBuf frame) {
        ClientConnection connection = exchange.connection();
        if (!reply.moreToCome() && connection.link().clientClosed()) {
            // the client gave up and closed before its request had crossed a slow link (its FIN came behind it): a reply
            // now meets its closed socket, so the command ended as the client saw it, in a network error
            frame.release();
            exchange.completeAsNetworkError(command);
            return;
        }
        if (reply.moreToCome() || !connection.link().deliversLater()) { // a stream's reply ends nothing: the command stays awaited
            exchange.completeIfLast(command, reply);
            connection.sendToClient(frame);
        } else {
            connection.sendToClient(frame, new CountedReply(exchange, command, reply));
        }
    }

    @Override
    public void arrived() {
        exchange.completeIfLast(command, reply);
    }

    @Override
    public void lost() {
        exchange.completeAsNetworkError(command);
    }
}
