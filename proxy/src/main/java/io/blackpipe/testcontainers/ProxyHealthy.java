package io.blackpipe.testcontainers;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.testcontainers.containers.ContainerLaunchException;
import org.testcontainers.containers.wait.strategy.AbstractWaitStrategy;

/**
 * Waits until the proxy's /health answers 200. A container that stops first (a bad BLACKPIPE_* value, an upstream that
 * never answers: exit 2 or 1 within a second or so) fails the start at once, with the end of its log, which says why:
 * Testcontainers' HTTP wait kept asking a container that was gone, for the whole startup timeout.
 */
final class ProxyHealthy extends AbstractWaitStrategy {
    private static final int LOG_LINES = 20;
    private static final Duration ASK_EVERY = Duration.ofMillis(250);
    /** One for every wait: a client made per wait is never closed (HttpClient.close() is Java 21's). */
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(ASK_EVERY.multipliedBy(4)).build();
    private final int adminPort;

    ProxyHealthy(int adminPort) {
        this.adminPort = adminPort;
    }

    @Override
    protected void waitUntilReady() {
        URI health = URI.create("http://" + waitStrategyTarget.getHost() + ":" + waitStrategyTarget.getMappedPort(adminPort) + "/health");
        long deadline = System.nanoTime() + startupTimeout.toNanos();
        while (!answersOk(HTTP, health)) {
            if (!waitStrategyTarget.isRunning()) {
                throw new ContainerLaunchException("the blackpipe container stopped before its proxy was healthy; its log ends:\n"
                        + logEnd());
            }
            if (System.nanoTime() - deadline > 0) {
                throw new ContainerLaunchException("the proxy in the blackpipe container was not healthy within "
                        + startupTimeout.toSeconds() + " s (GET " + health + "); its log ends:\n" + logEnd());
            }
            try {
                Thread.sleep(ASK_EVERY.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ContainerLaunchException("interrupted while waiting for " + health, e);
            }
        }
    }

    private static boolean answersOk(HttpClient http, URI health) {
        try {
            HttpRequest request = HttpRequest.newBuilder(health).timeout(ASK_EVERY.multipliedBy(4)).build();
            return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false; // not listening yet
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private String logEnd() {
        List<String> lines = waitStrategyTarget.getLogs().lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_LINES), lines.size()));
    }
}
