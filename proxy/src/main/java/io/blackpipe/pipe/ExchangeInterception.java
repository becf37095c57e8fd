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
    public boolean clientSaidHelloOk() {
        return exchange.hellos().clientSaidHelloOk();
    }

    /** The topologyVersion for a state-change error from this member: a newer one is the member's news to every hello. */
    @Override
    public BsonDocument topologyVersion(boolean newer, long announceAfterMillis) {
        BsonDocument version = exchange.context().memberStates().topologyVersion(exchange.member().upstream(), newer);
        if (newer && version != null) {
            MemberListener listener = exchange.connection().listener();
            if (announceAfterMillis == 0) {
                listener.topologyChanged();
            } else {
                exchange.connection().schedule(announceAfterMillis, listener::topologyChanged);
            }
        }
        return version;
    }

    @Override
    public boolean onChangeStream() {
        CommandFacts facts = facts();
        return facts.changeStream() || facts.name().equals("getMore")
                && exchange.context().changeStreams().isChangeStream(exchange.member().upstream(), CursorIds.ofGetMore(frame));
    }
}
