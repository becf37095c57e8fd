package io.blackpipe.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** HAProxy in TCP mode: the plain-proxy baseline (it parses nothing), started and stopped by the harness. */
final class Haproxy implements AutoCloseable {
    static final String INSTALL_HINT = "apt-get install -y haproxy   (Debian/Ubuntu; the package is 'haproxy')";

    private final Process process;
    private final Path dir;
    private final int port;

    private Haproxy(Process process, Path dir, int port) {
        this.process = process;
        this.dir = dir;
        this.port = port;
    }

    /** The first line of {@code haproxy -v}, or empty when haproxy is not on PATH (or does not run). */
    static Optional<String> version() {
        try {
            Process p = new ProcessBuilder("haproxy", "-v").redirectErrorStream(true).start();
            String out;
            try (InputStream in = p.getInputStream()) {
                out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                return Optional.empty();
            }
            return out.lines().findFirst().map(String::trim);
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /**
     * Writes a minimal haproxy.cfg (mode tcp, one frontend on a free loopback port) and starts haproxy
     * in the foreground, on the CPUs {@code placement} gives the proxies.
     */
    static Haproxy start(String upstreamHost, int upstreamPort, CpuPlacement placement) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("blackpipe-bench-haproxy-");
        int port = FreePort.pick();
        Path cfg = dir.resolve("haproxy.cfg");
        Files.writeString(cfg, String.join("\n", List.of(
                "# written by the blackpipe benchmark: a plain TCP proxy, the baseline",
                "global",
                "    maxconn 4096",
                "defaults",
                "    mode tcp",
                "    timeout connect 5s",
                "    timeout client 1h",
                "    timeout server 1h",
                "frontend bench",
                "    bind 127.0.0.1:" + port,
                "    default_backend upstream",
                "backend upstream",
                "    server upstream " + upstreamHost + ":" + upstreamPort,
                "")));
        Path log = dir.resolve("haproxy.log");
        Process process = new ProcessBuilder(placement.wrap(List.of("haproxy", "-db", "-f", cfg.toString())))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Haproxy haproxy = new Haproxy(process, dir, port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            if (!process.isAlive()) {
                String output = Files.readString(log);
                haproxy.close();
                throw new IOException("haproxy exited with " + process.exitValue() + ": " + output.strip());
            }
            try (Socket probe = new Socket()) {
                probe.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return haproxy;
            } catch (IOException notYet) {
                if (System.nanoTime() > deadline) {
                    haproxy.close();
                    throw new IOException("haproxy did not listen on 127.0.0.1:" + port + " within 10 s");
                }
                Thread.sleep(20);
            }
        }
    }

    int port() {
        return port;
    }

    long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException ignored) {
            // a temp dir left behind is harmless
        }
    }
}
