package io.blackpipe.topology;

import io.blackpipe.wire.Header;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.netty.buffer.ByteBuf;
import java.util.function.IntConsumer;

/**
 * The member's own stream of hello replies on one connection: a server's answer to an awaitable hello with
 * exhaustAllowed, a reply each maxAwaitTimeMS or at a change, each answering the last. It follows which reply the
 * member's next one answers, and which one the client's next must answer, since the proxy may answer in the stream
 * in between ({@link HelloExchange#answerAwaitingNow}) or end it with an error. Used from the connection's event loop
 * only.
 */
final class MemberHelloStream {
    /** Whether the client streams hello and the member still answers it. */
    private boolean open;
    /**
     * Whether an error the proxy sent ended a stream the member still runs: its replies, from {@link #droppedAwaited} on,
     * are dropped, whatever the client asks next on the connection.
     */
    private boolean dropping;
    private int droppedAwaited;
    /** The responseTo of the member's next streamed reply: the request's id, then each reply's. */
    private int awaited;
    /** The requestId the client's next streamed reply must answer: the member's last, or the proxy's answer. */
    private int chain;
    /** The command the client streams: hello, or legacy isMaster, whose replies name the primary differently. */
    private String name;
    /** The client's hello that began the stream: the member's first reply answers it, each later one the reply before. */
    private int requestId;

    /** The client sent an awaitable hello with exhaustAllowed: the member's replies to it stream. */
    void begin(int requestId, String command) {
        open = true;
        this.requestId = requestId;
        name = command;
        awaited = requestId;
        chain = requestId;
    }

    boolean open() {
        return open;
    }

    String name() {
        return name;
    }

    /** Whether the member's reply with this responseTo is the stream's next. */
    boolean isNext(int responseTo) {
        return open && responseTo == awaited;
    }

    /**
     * Whether the member's reply with this responseTo is the stream's next after its first: mongod makes each such reply
     * by running the hello again, a check of its own, which its failCommand failpoint may fail.
     */
    boolean isNextCheck(int responseTo) {
        return isNext(responseTo) && responseTo != requestId;
    }

    /**
     * Follows the member's streamed reply; true when its responseTo had to be changed to answer
     * the proxy's answer that the client got in between.
     */
    boolean follow(ByteBuf frame, OpMsg msg) {
        if (msg.moreToCome()) {
            awaited = Header.requestId(frame);
        } else {
            open = false;
        }
        boolean rechained = Header.responseTo(frame) != chain;
        if (rechained) {
            frame.setIntLE(frame.readerIndex() + 8, chain); // the header's responseTo
        }
        chain = Header.requestId(frame);
        return rechained;
    }

    /** The proxy answers in the stream now, with {@code requestId}: returns the responseTo its answer carries. */
    int answerHere(int requestId) {
        int responseTo = chain;
        chain = requestId;
        return responseTo;
    }

    /** An error the proxy sends ends the stream: returns the responseTo it carries; the member's next replies are dropped. */
    int endHere() {
        open = false;
        dropping = true;
        droppedAwaited = awaited;
        return chain;
    }

    /**
     * Whether the member's reply with this responseTo belongs to a stream an error ended, and is to be dropped: then
     * {@code onNext} gets the requestId the one after it answers, when more is to come.
     */
    boolean drops(ByteBuf frame, int responseTo, IntConsumer onNext) {
        if (!dropping || responseTo != droppedAwaited) {
            return false;
        }
        if (Header.opCode(frame) == OpCode.OP_MSG && OpMsg.parse(frame).moreToCome()) {
            droppedAwaited = Header.requestId(frame);
            onNext.accept(droppedAwaited);
        } else {
            dropping = false;
        }
        return true;
    }
}
