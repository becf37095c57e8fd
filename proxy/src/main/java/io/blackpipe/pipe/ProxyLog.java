package io.blackpipe.pipe;

import io.blackpipe.topology.Member;
import io.blackpipe.wire.MalformedMessageException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.NotSslRecordException;
import java.io.IOException;
import java.net.SocketAddress;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import javax.net.ssl.SSLException;

/** The proxy's log lines: one line per event, naming the connection and the reason. */
public final class ProxyLog {
    private final Logger logger = System.getLogger("blackpipe");

    public void info(String message) {
        logger.log(Level.INFO, message);
    }

    public void warn(String message) {
        logger.log(Level.WARNING, message);
    }

    /** How the log names a client's connection to a member's listener. */
    static String client(SocketAddress address, Member member) {
        return "client " + address + " on member " + member.upstream();
    }

    /** Logs why a connection is being closed: protocol violations by name, I/O errors briefly, bugs with a trace. */
    void connectionFailed(String who, Throwable cause) {
        failed(who, cause, false);
    }

    /** As {@link #connectionFailed}, for an app's connection to a listener: a failed TLS handshake says what to check too. */
    void clientConnectionFailed(String who, Throwable cause) {
        failed(who, cause, true);
    }

    private void failed(String who, Throwable cause, boolean onAListener) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (root instanceof NotSslRecordException) {
            logger.log(Level.INFO, "closing " + who + ": it did not speak TLS (plaintext on a TLS connection)");
        } else if (root instanceof SSLException) {
            String why = onAListener ? ListenerTlsFailures.whatToCheck(root.getMessage()) : null;
            logger.log(Level.INFO, "closing " + who + ": TLS failed: " + root.getMessage() + (why == null ? "" : " (" + why + ")"));
        } else if (root instanceof MalformedMessageException) {
            logger.log(Level.WARNING, "closing " + who + ": malformed message: " + root.getMessage());
        } else if (root instanceof IOException) {
            logger.log(Level.INFO, "closing " + who + ": " + root.getMessage());
        } else {
            logger.log(Level.ERROR, "closing " + who + " after an unexpected error", root);
        }
    }
}
