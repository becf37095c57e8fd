package io.blackpipe.wire;

/** A frame or document that breaks the wire protocol; the connection that sent it is closed. */
public final class MalformedMessageException extends RuntimeException {
    public MalformedMessageException(String reason) {
        super(reason, null, false, false);
    }
}
