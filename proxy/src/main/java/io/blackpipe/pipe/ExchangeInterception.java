package io.blackpipe.pipe;

import io.blackpipe.fault.Interception;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberState;
import io.blackpipe.topology.MemberStates;
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

    /**
     * The topologyVersion for a state-change error from this member: a newer one is the member's news to the hellos it
     * holds from {@code announceAfterMillis} on (see {@link MemberStates#newerUnannounced}).
     */
    @Override
    public BsonDocument topologyVersion(boolean newer, long announceAfterMillis) {
        MemberStates states = exchange.context().memberStates();
        MemberAddress member = exchange.member().upstream();
        if (!newer) {
            return states.topologyVersion(member, false);
        }
        BsonDocument version = states.newerUnannounced(member);
        if (version != null) {
            MemberListener listener = exchange.connection().listener();
            Runnable announce = () -> {
                states.announced(member);
                listener.topologyChanged();
            };
            if (announceAfterMillis == 0) {
                announce.run();
            } else {
                exchange.connection().schedule(announceAfterMillis, announce);
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
