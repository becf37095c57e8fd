package io.blackpipe.cli;

import io.blackpipe.admin.AdminServer;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import java.io.PrintWriter;
import java.util.concurrent.CountDownLatch;

/** A started proxy with its admin server, as the CLI runs it. */
final class RunningProxy implements AutoCloseable {
    final ProxyServer proxy;
    final AdminServer admin;
    final String adminAddress;

    private RunningProxy(ProxyServer proxy, AdminServer admin, String adminAddress) {
        this.proxy = proxy;
        this.admin = admin;
        this.adminAddress = adminAddress;
    }

    /** @throws RuntimeException with a message for the user when the proxy or admin server cannot start */
    static RunningProxy start(ProxyConfig config, String adminToken) {
        ProxyServer proxy = ProxyServer.start(config);
        try {
            AdminServer admin = config.adminPort() < 0 ? null : AdminServer.start(proxy, config.adminHost(), config.adminPort(), adminToken);
            return new RunningProxy(proxy, admin, admin == null ? null : config.adminHost() + ":" + admin.port());
        } catch (RuntimeException e) {
            proxy.close();
            throw e;
        }
    }

    void printBanner(PrintWriter out) {
        StartupBanner.print(out, proxy, adminAddress);
    }

    /** Blocks until the JVM is asked to stop (Ctrl-C, SIGTERM), then closes everything. */
    void awaitShutdown(Runnable alsoOnShutdown) throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            close();
            alsoOnShutdown.run();
            stopped.countDown();
        }, "blackpipe-shutdown"));
        stopped.await();
    }

    @Override
    public void close() {
        if (admin != null) {
            admin.close();
        }
        proxy.close();
    }
}
