package io.blackpipe.pipe;

import io.blackpipe.wire.Tls;
import io.netty.handler.ssl.JdkSslContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * A TLS terminator in front of a plaintext server (what a TLS-enabled mongod looks like from the
 * outside): it requires a client certificate signed by the test CA, completes the handshake, and
 * relays bytes to the target port. Blocking sockets and threads: no Netty buffers to leak.
 */
final class TlsRelay implements AutoCloseable {
    private final SSLServerSocket server;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final AtomicInteger handshakes = new AtomicInteger();
    private final AtomicInteger failedHandshakes = new AtomicInteger();
    private final Set<String> peerSubjects = ConcurrentHashMap.newKeySet();
    private volatile int targetPort;

    TlsRelay(TestCertificates certificates) throws IOException {
        this(certificates, certificates.serverCert, certificates.serverKey);
    }

    /** A relay presenting {@code cert} (signed by the test CA) instead of the certificate for 127.0.0.1. */
    TlsRelay(TestCertificates certificates, Path cert, Path key) throws IOException {
        JdkSslContext context = (JdkSslContext) Tls.server(cert, key, certificates.ca);
        server = (SSLServerSocket) context.context().getServerSocketFactory().createServerSocket();
        server.setNeedClientAuth(true);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        Thread accept = new Thread(this::acceptLoop, "tls-relay-accept-" + port());
        accept.setDaemon(true);
        accept.start();
    }

    int port() {
        return server.getLocalPort();
    }

    String address() {
        return "127.0.0.1:" + port();
    }

    void relayTo(int port) {
        targetPort = port;
    }

    int handshakes() {
        return handshakes.get();
    }

    int failedHandshakes() {
        return failedHandshakes.get();
    }

    /** The subjects of the client certificates presented in completed handshakes. */
    Set<String> peerSubjects() {
        return Set.copyOf(peerSubjects);
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                SSLSocket client = (SSLSocket) server.accept();
                sockets.add(client);
                start(() -> serve(client), "tls-relay-" + client.getPort());
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(SSLSocket client) {
        try {
            client.startHandshake();
        } catch (IOException e) {
            failedHandshakes.incrementAndGet();
            closeQuietly(client);
            return;
        }
        handshakes.incrementAndGet();
        try {
            peerSubjects.add(client.getSession().getPeerPrincipal().getName());
        } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
            // needClientAuth: cannot happen after a completed handshake
        }
        Socket upstream = new Socket();
        sockets.add(upstream);
        try {
            upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 5000);
            upstream.setTcpNoDelay(true);
        } catch (IOException e) {
            closeQuietly(client);
            closeQuietly(upstream);
            return;
        }
        start(() -> pump(upstream, client), "tls-relay-back-" + client.getPort());
        pump(client, upstream);
    }

    private void pump(Socket from, Socket to) {
        byte[] buffer = new byte[16 * 1024];
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // one side went away: end both
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static void start(Runnable task, String name) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
    }

    private void closeQuietly(Socket socket) {
        sockets.remove(socket);
        try {
            socket.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        sockets.forEach(this::closeQuietly);
    }
}
