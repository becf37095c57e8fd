package io.blackpipe.fault;

/** What happens to the reply of a forwarded command. */
@FunctionalInterface
public interface ReplyFate {
    void decide(Reply reply);

    /** The upstream's reply to an intercepted command; exactly one terminal call must be made. */
    interface Reply {
        /** The reply body, decoded on first use. */
        org.bson.BsonDocument body();

        void pass();

        void passAfter(long millis);

        /** Send the first {@code bytesPerPiece} bytes now, then as many every {@code intervalMillis} until all are sent. */
        void passInPieces(int bytesPerPiece, long intervalMillis);

        /** Send {@code body} instead (header ids kept). */
        void replace(org.bson.BsonDocument body);

        /** Discard the reply and reset the client connection: the write happened, the client cannot know. */
        void dropAndReset();

        /**
         * Send the first {@code bytes} bytes of the reply (all but its last byte when it has no more), then close
         * the client connection (FIN): the reply is always cut, the write happened, the client cannot know.
         */
        void truncateAndClose(int bytes);
    }
}
