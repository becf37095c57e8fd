package io.blackpipe.cli;

import io.blackpipe.topology.HostNames;
import io.blackpipe.admin.AdminServer;
import io.blackpipe.observe.ProcessMetrics;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyLog;
import io.blackpipe.pipe.ProxyServer;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.atomic.AtomicBoolean;

/** A started proxy with its admin server, as the CLI runs it. */
final class RunningProxy implements AutoCloseable {
    final ProxyServer proxy;
    final AdminServer admin;
    final String adminAddress;
    private final ProcessMetrics processMetrics;

    private RunningProxy(ProxyServer proxy, AdminServer admin, String adminAddress) {
        this.proxy = proxy;
        this.admin = admin;
        this.adminAddress = adminAddress;
        this.processMetrics = ProcessMetrics.bindTo(proxy.registry());
    }

    /** @throws RuntimeException with a message for the user when the proxy or admin server cannot start */
    static RunningProxy start(ProxyConfig config, String adminToken) {
        ProxyServer proxy = ProxyServer.start(config);
        try {
            AdminServer admin = config.adminPort() < 0 ? null : AdminServer.start(proxy, config.adminHost(), config.adminPort(), adminToken);
            if (admin != null && adminToken == null && !onLoopbackOnly(config.adminHost())) {
                new ProxyLog().warn("the admin API listens on " + HostNames.withPort(config.adminHost(), admin.port()) + " with no"
                        + " --admin-token: whoever reaches that address can add faults, fail members over and read the history."
                        + " Set BLACKPIPE_ADMIN_TOKEN (--admin-token), or let only this host reach it (--admin-host 127.0.0.1,"
                        + " or publish a container's port on the host's 127.0.0.1: -p 127.0.0.1:9090:9090)");
            }
            return new RunningProxy(proxy, admin, admin == null ? null : HostNames.withPort(config.adminHost(), admin.port()));
        } catch (RuntimeException e) {
            proxy.close();
            throw e;
        }
    }

    /** Whether {@code host} names loopback addresses only (a name that does not resolve is no such promise). */
    static boolean onLoopbackOnly(String host) {
        try {
            for (InetAddress address : InetAddress.getAllByName(host)) {
                if (!address.isLoopbackAddress()) {
                    return false;
                }
            }
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    void printBanner(PrintWriter out) {
        StartupBanner.print(out, proxy, adminAddress);
    }

    /**
     * Blocks until asked to stop, then closes everything, once. Ctrl-C or SIGTERM ({@code stop}): closed here, and the
     * command returns (exit status 0, see {@link StopSignals}). Any other end of the JVM: closed by its shutdown hook.
     */
    void awaitShutdown(StopSignals stop, Runnable alsoOnShutdown) throws InterruptedException {
        AtomicBoolean closing = new AtomicBoolean();
        Runnable closeOnce = () -> {
            if (closing.compareAndSet(false, true)) {
                close();
                alsoOnShutdown.run();
            }
        };
        Thread hook = new Thread(() -> {
            closeOnce.run();
            stop.request();
        }, "blackpipe-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        stop.await();
        closeOnce.run();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException exiting) {
            // the JVM is ending otherwise, and the hook closed everything
        }
    }

    /**
     * The exit status once the proxy is closed: 0, or 1 with a line saying why when the history file stopped during the
     * run. A SIGTERM is to "complete the history file"; a CI job must not take an incomplete one as whole.
     */
    int exitStatus(PrintWriter err) {
        String failure = proxy.history().fileFailure();
        if (failure == null) {
            return 0;
        }
        err.println("blackpipe: exit status 1: " + failure);
        err.flush();
        return 1;
    }

    @Override
    public void close() {
        if (admin != null) {
            admin.close();
        }
        processMetrics.close();
        proxy.close();
    }
}
