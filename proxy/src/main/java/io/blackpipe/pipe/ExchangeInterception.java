package io.blackpipe.pipe;

import io.blackpipe.fault.Interception;
import io.blackpipe.topology.MemberState;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.CursorIds;
import io.netty.buffer.ByteBuf;
import org.bson.BsonDocument;

/** What every interception on a connection shares: its exchange, the intercepted frame, the member's state. */
abstract class ExchangeInterception implements Interception {
    final Exchange exchange;
    final ByteBuf frame;

    ExchangeInterception(Exchange exchange, ByteBuf frame) {
        this.exchange = exchange;
        this.frame = frame;
    }

    @Override
    public MemberState memberState() {
        return exchange.memberState();
    }

    @Override
    public BsonDocument topologyVersion(boolean newer) {
        return exchange.topologyVersion(newer);
    }

    @Override
    public boolean onChangeStream() {
        CommandFacts facts = facts();
        return facts.changeStream() || facts.name().equals("getMore")
                && exchange.context().changeStreams().isChangeStream(exchange.member().upstream(), CursorIds.ofGetMore(frame));
    }
}
