package io.blackpipe.pipe;

import io.blackpipe.wire.PlaintextOnTls;
import io.blackpipe.wire.Tls;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeTimeoutException;

/** TLS on the listeners apps connect to: what each accepted connection meets before its messages are framed. */
final class TlsListener {
    private final SslContext context;
    private final ProxyConfig.ListenerTls config;
    private final ProxyLog log;

    private TlsListener(SslContext context, ProxyConfig.ListenerTls config, ProxyLog log) {
        this.context = context;
        this.config = config;
        this.log = log;
    }

    /** The listeners' TLS, or null when they speak plaintext ({@code config} null). */
    static TlsListener of(ProxyConfig.ListenerTls config, ProxyLog log) {
        return config == null ? null : new TlsListener(Tls.server(config.cert(), config.key(), config.clientCa()), config, log);
    }

    /**
     * Puts on an accepted connection the check for a plaintext client, then TLS with the handshake timeout
     * its member's link allows. A handshake that times out is logged here: Netty closes the connection
     * without raising it to the handlers after.
     */
    void addTo(SocketChannel ch, MemberListener listener) {
        SslHandler tls = context.newHandler(ch.alloc());
        tls.setHandshakeTimeoutMillis(config.handshakeTimeoutMillisOn(listener.latency(), listener.bandwidth()));
        tls.handshakeFuture().addListener(handshake -> {
            if (handshake.cause() instanceof SslHandshakeTimeoutException timedOut) {
                log.clientConnectionFailed(ProxyLog.client(ch.remoteAddress(), listener.member()), timedOut);
            }
        });
        ch.pipeline().addLast(new PlaintextOnTls(), tls);
    }
}
