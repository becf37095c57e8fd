package io.blackpipe.pipe;

import io.blackpipe.topology.HostNames;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * A member's listening port, under its {@link MemberListener}'s lock: bound at start, closed while the member is down
 * (its port held meanwhile by a socket that does not listen, so no process asking for a free port is given it), and
 * bound again on the same port when the member is back.
 */
final class MemberPort {
    private final ServerBootstrap bootstrap;
    private final String bindHost;
    private final ProxyLog log;
    private int port;
    private Channel channel;
    /** The port kept while the listener is closed; null while it listens. */
    private PortHold portHold;

    MemberPort(ServerBootstrap bootstrap, String bindHost, ProxyLog log) {
        this.bootstrap = bootstrap;
        this.bindHost = bindHost;
        this.log = log;
    }

    int bind(int requestedPort) throws InterruptedException {
        try {
            channel = bootstrap.bind(bindHost, requestedPort).sync().channel();
        } catch (java.nio.channels.UnresolvedAddressException e) { // its message is null
            throw new IllegalArgumentException("the bind host '" + bindHost + "' is neither an IP address nor a host name that resolves", e);
        } catch (InterruptedException | RuntimeException e) {
            throw e;
        } catch (Exception e) { // Netty rethrows the bind's own (checked) exception, which names no address
            throw new IllegalStateException(e.getMessage() + " (bind address " + bindHost + ")", e);
        }
        port = ((InetSocketAddress) channel.localAddress()).getPort();
        return port;
    }

    /**
     * Stops listening, has {@code endConnections} end the member's connections, then holds the port: after them, as the
     * hold may wait a while for the closed listener's socket to let the port go (see {@link PortHold#take}).
     */
    void closeAndHold(Runnable endConnections) throws InterruptedException {
        channel.close().sync();
        // The JDK closes a server socket registered with a selector only when that selector next selects; until then
        // a quick restore cannot bind the port again ("Address already in use"). A task scheduled now runs after it.
        channel.eventLoop().schedule(() -> { }, 1, TimeUnit.MILLISECONDS).sync();
        endConnections.run();
        portHold = PortHold.take(bindHost, port, log);
    }

    /** Listens again on the same port (a failed bind, the port taken, throws and leaves it closed). */
    void listenAgain() throws InterruptedException {
        letThePortGo();
        channel = bootstrap.bind(bindHost, port).sync().channel();
    }

    /** Whether it listens: bound at start or again; not while closed, nor after a bind again failed. */
    boolean listening() {
        return channel != null && channel.isActive();
    }

    /** The proxy is closing: the port goes, listening or held. */
    void close() {
        if (channel != null) {
            channel.close();
        }
        letThePortGo();
    }

    /** host:port, for log lines. */
    String describe() {
        return HostNames.withPort(bindHost, port);
    }

    private void letThePortGo() {
        if (portHold != null) {
            portHold.close();
            portHold = null;
        }
    }
}
