package io.blackpipe.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A dumb TCP relay that records every byte in both directions, per connection. Put one in front
 * of the proxy and one behind it to compare what the proxy received with what it sent.
 */
public final class TcpTap implements AutoCloseable {
    /** The bytes of one relayed connection. */
    public static final class Recording {
        private final ByteArrayOutputStream fromClient = new ByteArrayOutputStream();
        private final ByteArrayOutputStream fromServer = new ByteArrayOutputStream();

        public synchronized List<byte[]> clientFrames() {
            return frames(fromClient.toByteArray());
        }

        public synchronized List<byte[]> serverFrames() {
            return frames(fromServer.toByteArray());
        }

        synchronized void record(boolean client, byte[] bytes, int length) {
            (client ? fromClient : fromServer).write(bytes, 0, length);
        }
    }

    private final ServerSocket server;
    private final String targetHost;
    private final int targetPort;
    private final List<Recording> recordings = new CopyOnWriteArrayList<>();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Thread acceptor;
    /** While true, what the server sends waits in the tap: a command stays in flight as long as a test wants. */
    private boolean holdingReplies;

    public TcpTap(String targetHost, int targetPort) throws IOException {
        this(targetHost, targetPort, 0);
    }

    /** A tap listening on {@code listenPort} of the loopback (0: any free one): one closed earlier, opened again there. */
    public TcpTap(String targetHost, int targetPort, int listenPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), listenPort), 50);
        acceptor = new Thread(this::acceptLoop, "tcp-tap-accept-" + port());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Holds (true) or lets go (false) the bytes the server sends; what the client sends passes either way. */
    public synchronized void holdReplies(boolean hold) {
        holdingReplies = hold;
        notifyAll();
    }

    private synchronized void awaitRepliesLetGo() throws InterruptedException {
        while (holdingReplies) {
            wait();
        }
    }

    public List<Recording> recordings() {
        return new ArrayList<>(recordings);
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(targetHost, targetPort);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                Recording recording = new Recording();
                recordings.add(recording);
                relay(client, upstream, recording, true);
                relay(upstream, client, recording, false);
            } catch (IOException e) {
                return;
            }
        }
    }

    private void relay(Socket from, Socket to, Recording recording, boolean fromClient) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[64 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) > 0) {
                    if (!fromClient) {
                        awaitRepliesLetGo();
                    }
                    recording.record(fromClient, buffer, n);
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException ignored) {
                // one side went away: close both below
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-tap-relay");
        thread.setDaemon(true);
        thread.start();
    }

    /** Splits a byte stream into wire messages by their length prefix. */
    public static List<byte[]> frames(byte[] stream) {
        List<byte[]> frames = new ArrayList<>();
        int pos = 0;
        while (stream.length - pos >= 4) {
            int length = ByteBuffer.wrap(stream, pos, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
            if (length < 16 || stream.length - pos < length) {
                break;
            }
            byte[] frame = new byte[length];
            System.arraycopy(stream, pos, frame, 0, length);
            frames.add(frame);
            pos += length;
        }
        return frames;
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    /** Closes every relayed connection (a FIN each way) and goes on accepting: the server's side dropped them. */
    public void dropConnections() {
        sockets.forEach(TcpTap::closeQuietly);
        sockets.clear();
    }

    /** Resets every relayed connection (a RST each way: SO_LINGER 0) and goes on accepting: the server's side aborted them. */
    public void resetConnections() {
        for (Socket socket : sockets) {
            try {
                socket.setSoLinger(true, 0);
            } catch (IOException ignored) {
                // closed already: nothing to reset
            }
        }
        dropConnections();
    }

    /**
     * Closes the port and every relayed connection. Waits for the accepting thread to end first: a thread still in
     * accept() holds the listening socket open until it wakes, so a dial just after close() could still be accepted (on
     * a busy machine), relayed, and never closed: the port then seemed to answer after it was closed.
     */
    @Override
    public void close() throws IOException {
        holdReplies(false);
        server.close();
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sockets.forEach(TcpTap::closeQuietly);
    }
}
