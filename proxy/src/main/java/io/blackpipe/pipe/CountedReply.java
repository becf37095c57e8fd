package io.blackpipe.pipe;

import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;

/**
 * A member's reply on its way to the client, counted as the client gets it: delivered as it is sent, or, while the
 * link to the client is narrow ({@link ClientLink}) and would carry it later, once its last byte is carried; a reply
 * lost before that (a reset cut it, the client left) ends its command in a network error, as the client sees it.
 */
record CountedReply(Exchange exchange, InFlight command, ReplyFacts reply) implements Delivery {
    static void send(Exchange exchange, InFlight command, ReplyFacts reply, ByteBuf frame) {
        ClientConnection connection = exchange.connection();
        if (reply.moreToCome() || !connection.linkCarriesLater()) { // a stream's reply ends nothing: the command stays awaited
            exchange.completeIfLast(command, reply);
            connection.sendToClient(frame);
        } else {
            connection.sendToClient(frame, new CountedReply(exchange, command, reply));
        }
    }

    @Override
    public void carried() {
        exchange.completeIfLast(command, reply);
    }

    @Override
    public void lost() {
        exchange.completeAsNetworkError(command);
    }
}
