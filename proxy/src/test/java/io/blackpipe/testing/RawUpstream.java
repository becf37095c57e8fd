package io.blackpipe.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;

/**
 * A bare upstream for tests that need to control the bytes and the pace on the upstream side: a
 * loopback listener that hands each accepted socket, with its index (0 = first), to a script
 * on its own thread. {@link #answerHellos} is enough for the proxy's start-up discovery.
 */
public final class RawUpstream implements AutoCloseable {
    /** What to do with one accepted connection; the socket is closed when the script returns. */
    @FunctionalInterface
    public interface Script {
        void run(Socket socket, int index) throws Exception;
    }

    private final ServerSocket server;
    private final Script script;
    private final AtomicInteger accepted = new AtomicInteger();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();
    private final Thread acceptor;
    private volatile boolean accepting = true;

    public RawUpstream(Script script) throws IOException {
        this.script = script;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        server.setSoTimeout(50); // the acceptor looks up now and then: stopAccepting() needs it out of accept()
        acceptor = new Thread(this::acceptLoop, "raw-upstream-accept-" + port());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * From now on a connect to this member hangs, as to a host whose packets are dropped: nothing accepts any more,
     * and the listener's backlog is filled, so the kernel drops every further SYN. Connections already accepted go
     * on. Returns once a connect of its own timed out.
     */
    public void stopAccepting() throws IOException, InterruptedException {
        accepting = false;
        acceptor.join();
        InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), port());
        while (true) {
            Socket filler = new Socket();
            try {
                filler.connect(address, 200);
            } catch (SocketTimeoutException full) {
                filler.close();
                return;
            }
            sockets.add(filler);
        }
    }

    public int port() {
        return server.getLocalPort();
    }

    /** "127.0.0.1:PORT". */
    public String address() {
        return "127.0.0.1:" + port();
    }

    public int accepted() {
        return accepted.get();
    }

    /** Exceptions scripts threw (other than the peer going away after close). */
    public List<Throwable> errors() {
        return new ArrayList<>(errors);
    }

    private void acceptLoop() {
        while (accepting && !server.isClosed()) {
            Socket socket;
            try {
                socket = server.accept();
            } catch (SocketTimeoutException idle) {
                continue;
            } catch (IOException e) {
                return;
            }
            int index = accepted.getAndIncrement();
            sockets.add(socket);
            Thread thread = new Thread(() -> {
                try (socket) {
                    script.run(socket, index);
                } catch (Exception e) {
                    if (!server.isClosed()) {
                        errors.add(e);
                    }
                }
            }, "raw-upstream-conn-" + index);
            thread.setDaemon(true);
            thread.start();
        }
    }

    /** Reads one whole message, or null when the peer closed before its first byte. */
    public static byte[] readFrame(InputStream in) throws IOException {
        return ScriptedMongodWire.readMessage(in, 48_000_000);
    }

    /** Answers every request with a standalone mongod's hello reply until the peer closes. */
    public static void answerHellos(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        byte[] request;
        int replyId = 1;
        while ((request = readFrame(in)) != null) {
            out.write(ScriptedMongodWire.buildOpMsg(replyId++, ScriptedMongodWire.requestId(request), 0, standaloneHello(), null));
            out.flush();
        }
    }

    public static BsonDocument standaloneHello() {
        return new BsonDocument("isWritablePrimary", BsonBoolean.TRUE)
                .append("maxBsonObjectSize", new BsonInt32(16 * 1024 * 1024))
                .append("maxMessageSizeBytes", new BsonInt32(48_000_000))
                .append("maxWriteBatchSize", new BsonInt32(100_000))
                .append("minWireVersion", new BsonInt32(0))
                .append("maxWireVersion", new BsonInt32(21))
                .append("ok", new BsonDouble(1.0));
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket socket : sockets) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}
