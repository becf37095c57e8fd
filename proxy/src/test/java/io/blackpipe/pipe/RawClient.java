package io.blackpipe.pipe;

import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.topology.MemberAddress;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;

/** A plain socket to a proxy listener, for bytes no driver would send and for watching closes. */
final class RawClient implements AutoCloseable {
    final Socket socket;

    private RawClient(Socket socket) {
        this.socket = socket;
    }

    static RawClient connect(MemberAddress address) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress(address.host(), address.port()), 5000);
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(10_000);
        return new RawClient(socket);
    }

    int localPort() {
        return socket.getLocalPort();
    }

    /** How the proxy names this client in its log: "client 127.0.0.1:PORT". */
    String logName() {
        return "client 127.0.0.1:" + localPort();
    }

    void send(byte[] bytes) throws IOException {
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
    }

    /** Reads one whole message; fails if the connection ends first. */
    byte[] readFrame() throws IOException {
        byte[] frame = ScriptedMongodWire.readMessage(socket.getInputStream(), 48_000_000);
        if (frame == null) {
            throw new IOException("the proxy closed the connection instead of replying");
        }
        return frame;
    }

    /** Sends a request and reads the one reply. */
    byte[] roundTrip(byte[] request) throws IOException {
        send(request);
        return readFrame();
    }

    /**
     * Reads until the peer ends the connection (end of stream, or a reset) and returns every byte
     * that arrived before; fails if the connection is still open after {@code timeout}.
     */
    byte[] awaitClosedByPeer(Duration timeout) throws IOException {
        ByteArrayOutputStream received = new ByteArrayOutputStream();
        long deadline = System.nanoTime() + timeout.toNanos();
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[8192];
        while (true) {
            long remainingMs = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
            socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, remainingMs));
            int n;
            try {
                n = in.read(buffer);
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the proxy did not close the connection of local port " + localPort()
                        + " within " + timeout + " (" + received.size() + " bytes received)");
            } catch (SocketException e) {
                return received.toByteArray(); // reset: closed with unread bytes on its side
            }
            if (n < 0) {
                return received.toByteArray();
            }
            received.write(buffer, 0, n);
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
