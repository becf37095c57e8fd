package io.blackpipe.pipe;

import io.blackpipe.fault.Plural;
import io.blackpipe.topology.HostNames;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.wire.MalformedMessageException;
import io.blackpipe.wire.TlsInTheApp;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.IOException;
import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import javax.net.ssl.SSLException;

/** The proxy's log lines: one line per event, naming the connection and the reason. */
public final class ProxyLog {
    private final Logger logger = System.getLogger("blackpipe");
    /** Each connection refused for want of file descriptors: said a line a second. */
    private final OncePerSecond fileDescriptorRefusals = new OncePerSecond();
    /** Per member, each connection it closed while its client was there: a line a second, as its exit closes all of its. */
    private final Map<MemberAddress, OncePerSecond> membersClosing = new ConcurrentHashMap<>();
    private final UnreachableMembers unreachable;

    /**
     * A log no proxy owns (the admin API's, a start's, a test's): were it told of members, their held-back lines would
     * be said on Netty's global executor, whose one thread ends when idle.
     */
    public ProxyLog() {
        this(GlobalEventExecutor.INSTANCE);
    }

    /** A proxy's log: a member line held back to keep to one a second is said on {@code flushes} when its second is up. */
    ProxyLog(ScheduledExecutorService flushes) {
        unreachable = new UnreachableMembers(this, flushes);
    }

    public void info(String message) {
        logger.log(Level.INFO, message);
    }

    public void warn(String message) {
        logger.log(Level.WARNING, message);
    }

    /**
     * Logs that {@code member} could not be dialled for {@code client}. When the process is out of file descriptors,
     * the member is no cause: the client counts as refused, and the line comes at most once a second, counting them.
     * Otherwise the member's first failed dial is a warning, and the next are counted (see {@link UnreachableMembers}).
     */
    void upstreamUnreachable(Member member, SocketAddress client, Throwable cause, Runnable countRefused) {
        if (outOfFileDescriptors(cause)) {
            countRefused.run();
            refusedForFileDescriptors("closing client " + HostNames.ofPeer(client));
        } else {
            unreachable.refused(member, client, cause);
        }
    }

    /** A dial of {@code member} succeeded: said once when it had failed before. */
    void upstreamReached(Member member) {
        unreachable.reached(member);
    }

    /**
     * Whether {@code cause} is the process out of file descriptors ("Too many open files"). Each accepted client took
     * three log lines then, two with a stack, and blamed the upstream: 3,855 lines for 48 connections.
     */
    static boolean outOfFileDescriptors(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains("Too many open files")) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code member} closed the proxy's connection to it for {@code connection}, whose client's connection closes too, as
     * the member's close would reach it: said at most once a second, counting the others.
     */
    void memberClosed(Member member, OpenConnection connection) {
        membersClosing.computeIfAbsent(member.upstream(), m -> new OncePerSecond()).count(count -> info("member "
                + member.upstream() + " closed the proxy's connection to it for client " + connection.client() + " (connection "
                + connection.id() + "): the client's connection closes too" + (count == 1 ? "" : " (and " + (count - 1)
                + " more of this member's connections closed so, unsaid, since its last such line)")));
    }

    /** A listener could not accept a connection: the process is out of file descriptors. */
    void acceptFailed(SocketAddress listener) {
        refusedForFileDescriptors("listener " + HostNames.ofPeer(listener) + " could not accept a connection");
    }

    private void refusedForFileDescriptors(String what) {
        fileDescriptorRefusals.count(count -> warn(what + ": the proxy's process is out of file descriptors (Too many open files; "
                + Plural.of(count, "connection") + " refused so since the last such line): raise its limit (ulimit -n, a container's"
                + " nofile), or set --max-connections below half of it, as each connection holds two"));
    }

    /** How the log names a client's connection to a member's listener. */
    static String client(SocketAddress address, Member member) {
        return "client " + HostNames.ofPeer(address) + " on member " + member.upstream();
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
        if (outOfFileDescriptors(root)) {
            refusedForFileDescriptors("closing " + who);
        } else if (root instanceof NotSslRecordException) { // on a member's connection, the proxy's URI is the one to fix
            logger.log(Level.INFO, "closing " + who + ": it did not speak TLS (plaintext on a TLS connection)"
                    + (onAListener ? "; this listener takes TLS only: connect with " + TlsInTheApp.WHERE_IT_IS_TURNED_ON : ""));
        } else if (root instanceof SSLException) {
            String why = onAListener ? ListenerTlsFailures.whatToCheck(root.getMessage()) : null;
            logger.log(Level.INFO, "closing " + who + ": TLS failed: " + root.getMessage() + (why == null ? "" : " (" + why + ")"));
        } else if (root instanceof MalformedMessageException) {
            logger.log(Level.WARNING, "closing " + who + ": malformed message: " + root.getMessage());
        } else if (root instanceof IOException) {
            logger.log(Level.INFO, "closing " + who + ": " + root.getMessage());
        } else if (root instanceof OutOfMemoryError) { // a message too large for the direct memory left: a sizing, not a bug
            logger.log(Level.WARNING, "closing " + who + ": out of memory for its messages (" + root.getMessage() + "); give the proxy"
                    + " more (-Xmx, or -XX:MaxDirectMemorySize: see the README's Memory)");
        } else {
            logger.log(Level.ERROR, "closing " + who + " after an unexpected error", root);
        }
    }
}
