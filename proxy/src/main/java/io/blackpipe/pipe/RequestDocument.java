package io.blackpipe.pipe;

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

    @Override
    public BsonDocument get() {
        if (decoded == null) {
            decoded = msg != null ? msg.command(frame) : query != null ? query.commandDocument(frame) : new BsonDocument();
        }
        return decoded;
    }
}
