package io.blackpipe.bench;

import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.topology.Member;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Idle client connections held through blackpipe, and the heap they cost. Three processes, so
 * each stays within the file descriptor limit: this one holds the client sockets, a helper JVM
 * runs the wire responder (one upstream socket per connection), and another runs blackpipe,
 * which holds two sockets per connection (client side and upstream side) and reports its heap
 * used after GC (MemoryMXBean) before and after the connections are open.
 */
final class IdleConnections {
    /** What the measurement found. */
    record Result(int requested, int held, long heapBefore, long heapAfter, double bytesPerConnection,
                  long directBefore, long directAfter, long proxyFdLimit, double connectSeconds, String limitNote) {
    }

    private IdleConnections() {
    }

    static Result measure(int requested, List<String> proxyJvmArgs) throws IOException, InterruptedException {
        int fdsWanted = 2 * requested + 1024;
        try (ChildProcess responder = ChildProcess.start("responder", requested + 1024, List.of("-Xmx256m"), List.of("responder"));
             ChildProcess proxyHolder = startProxy(responder, fdsWanted, proxyJvmArgs)) {
            String ready = proxyHolder.await("ready", 60);
            int port = (int) ChildProcess.field(ready, "port");
            long proxyLimit = ChildProcess.field(ready, "fdlimit");
            long proxyFds = ChildProcess.field(ready, "fds");
            long ownLimit = Machine.fdLimit();
            long ownFds = Machine.openFds();
            long responderLimit = ChildProcess.field(responder.ask("count", "count", 10), "fdlimit");
            int held = (int) Math.min(requested, Math.min((proxyLimit - proxyFds - 256) / 2,
                    Math.min(ownLimit - ownFds - 256, responderLimit - 256)));
            String limitNote = null;
            if (held < requested) {
                limitNote = String.format("file descriptor limit: %,d idle connections need about %,d descriptors in the proxy "
                                + "process (2 per connection: client and upstream side) but its limit is %d and `ulimit -n %d` was "
                                + "refused (raising the hard limit needs CAP_SYS_RESOURCE, e.g. docker run --ulimit nofile=65536), "
                                + "so %,d were held; the heap per connection is measured on those",
                        requested, 2L * requested + proxyFds, proxyLimit, fdsWanted, held);
            }

            // Warm up the accept and connect paths once, so the baseline already has what every connection shares.
            List<SocketChannel> warm = open(port, Math.min(200, held));
            awaitOpen(proxyHolder, responder, warm.size());
            closeAll(warm);
            awaitOpen(proxyHolder, responder, 0);

            String before = proxyHolder.ask("heap", "heap", 60);
            long start = System.nanoTime();
            List<SocketChannel> sockets = open(port, held);
            double connectSeconds = (System.nanoTime() - start) / 1e9;
            try {
                awaitOpen(proxyHolder, responder, held);
                String after = proxyHolder.ask("heap", "heap", 60);
                long heapBefore = ChildProcess.field(before, "used");
                long heapAfter = ChildProcess.field(after, "used");
                if (ChildProcess.field(after, "open") != held) {
                    throw new IOException("the proxy holds " + ChildProcess.field(after, "open") + " connections, expected " + held);
                }
                return new Result(requested, held, heapBefore, heapAfter, (heapAfter - heapBefore) / (double) held,
                        ChildProcess.field(before, "direct"), ChildProcess.field(after, "direct"), proxyLimit,
                        connectSeconds, limitNote);
            } finally {
                closeAll(sockets);
            }
        }
    }

    private static ChildProcess startProxy(ChildProcess responder, int fds, List<String> jvmArgs) throws IOException, InterruptedException {
        String ready = responder.await("ready", 60);
        String uri = "mongodb://127.0.0.1:" + ChildProcess.field(ready, "port") + "/?replicaSet=" + WireResponder.SET_NAME;
        return ChildProcess.start("blackpipe", fds, jvmArgs, List.of("idle-proxy", uri));
    }

    private static List<SocketChannel> open(int port, int count) throws IOException {
        List<SocketChannel> sockets = new ArrayList<>(count);
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", port);
        try {
            for (int i = 0; i < count; i++) {
                sockets.add(SocketChannel.open(address)); // returns once the TCP connect completed
            }
        } catch (IOException e) {
            closeAll(sockets);
            throw new IOException("connection " + (sockets.size() + 1) + " of " + count + " failed: " + e.getMessage(), e);
        }
        return sockets;
    }

    private static void closeAll(List<SocketChannel> sockets) {
        for (SocketChannel s : sockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    /** Waits until the proxy counts {@code n} client connections and the responder {@code n} upstream ones. */
    private static void awaitOpen(ChildProcess proxy, ChildProcess responder, int n) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (true) {
            long proxied = ChildProcess.field(proxy.ask("count", "count", 30), "open");
            long upstream = ChildProcess.field(responder.ask("count", "count", 30), "open");
            if (proxied == n && upstream == n) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("after 120 s the proxy holds " + proxied + " and the responder " + upstream
                        + " connections, expected " + n);
            }
            Thread.sleep(100);
        }
    }

    // ---- the helper processes (Bench's "responder" and "idle-proxy" modes) ----

    static void serveResponder() throws IOException {
        try (WireResponder responder = WireResponder.start("127.0.0.1", 0, 1, 10, 0)) {
            System.out.println("ready port=" + responder.port());
            System.out.flush();
            commands(line -> switch (line) {
                case "count" -> "count open=" + responder.openConnections() + " fdlimit=" + Machine.fdLimit() + " fds=" + Machine.openFds();
                default -> null;
            });
        }
    }

    static void serveProxy(String upstream) throws IOException {
        Bench.quietLogs();
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(upstream))) {
            Member member = proxy.members().get(0);
            System.out.println("ready port=" + member.advertised().port() + " fdlimit=" + Machine.fdLimit() + " fds=" + Machine.openFds());
            System.out.flush();
            MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
            commands(line -> switch (line) {
                case "count" -> "count open=" + proxy.openConnections(member.upstream()) + " fds=" + Machine.openFds();
                case "heap" -> {
                    for (int i = 0; i < 3; i++) {
                        System.gc();
                        try {
                            Thread.sleep(200);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    yield "heap used=" + memory.getHeapMemoryUsage().getUsed()
                            + " direct=" + PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory()
                            + " open=" + proxy.openConnections(member.upstream()) + " fds=" + Machine.openFds();
                }
                default -> null;
            });
        }
    }

    private interface Answer {
        String to(String command);
    }

    /** Answers commands from stdin until "quit" or end of input. */
    private static void commands(Answer answer) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.equals("quit")) {
            String reply = answer.to(line.trim());
            System.out.println(reply == null ? "error unknown command '" + line + "'" : reply);
            System.out.flush();
        }
    }
}
