package io.blackpipe.pipe;

import io.blackpipe.wire.MalformedMessageException;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.OpQuery;
import io.netty.buffer.ByteBuf;
import java.util.function.Supplier;
import org.bson.BsonDocument;

/**
 * The document of the request being decided, decoded at most once and only if a rule looks into it
 * (commandMatches). One per connection, reused: a request no rule looks into costs nothing.
 */
final class RequestDocument implements Supplier<BsonDocument> {
    private ByteBuf frame;
    private OpMsg msg;
    private OpQuery query;
    private BsonDocument decoded;

    /** This request's (an OP_MSG's or an OP_QUERY's) until {@link #clear}. */
    RequestDocument of(ByteBuf frame, OpMsg msg, OpQuery query) {
        this.frame = frame;
        this.msg = msg;
        this.query = query;
        this.decoded = null;
        return this;
    }

    /** Once decided: the frame goes on (or is released), and is not held here. */
    void clear() {
        of(null, null, null);
    }

    /**
     * Null when the request's BSON does not decode (lengths right, an element type unknown): the proxy forwards what it
     * cannot read, so a rule looking into it must not make it malformed; such a request matches no pattern.
     */
    @Override
    public BsonDocument get() {
        if (decoded == null && frame != null) {
            try {
                decoded = msg != null ? msg.command(frame) : query.commandDocument(frame);
            } catch (MalformedMessageException unreadable) {
                frame = null; // asked again, still null
            }
        }
        return decoded;
    }
}
