package io.blackpipe.observe;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** Connection and byte meters per member; one instance per member, looked up once per connection. */
public final class ConnectionMeters {
    private final AtomicInteger open = new AtomicInteger();
    private final Counter opened;
    private final Counter bytesFromClients;
    private final Counter bytesFromUpstream;
    private final Counter idleTimeouts;
    private final Counter refused;

    private ConnectionMeters(MeterRegistry registry, String member) {
        Gauge.builder("blackpipe.connections.open", open, AtomicInteger::get)
                .description("Client connections open through the proxy").tag("member", member).register(registry);
        opened = Counter.builder("blackpipe.connections")
                .description("Client connections accepted").tag("member", member).register(registry);
        bytesFromClients = bytes(registry, member, "client_to_upstream");
        bytesFromUpstream = bytes(registry, member, "upstream_to_client");
        idleTimeouts = Counter.builder("blackpipe.connections.idle.timeouts")
                .description("Client connections a member's idle timeout forgot").tag("member", member).register(registry);
        refused = Counter.builder("blackpipe.connections.refused")
                .description("Client connections closed as accepted: --max-connections reached").tag("member", member).register(registry);
    }

    private static Counter bytes(MeterRegistry registry, String member, String direction) {
        // "Bytes forwarded" said, while a command a rule reset is counted and never reaches the member
        return Counter.builder("blackpipe.bytes").baseUnit("bytes").description("Bytes read from the clients (client_to_upstream,"
                        + " faulted commands included: not all reach the member) and from the member (upstream_to_client)")
                .tag("member", member).tag("direction", direction).register(registry);
    }

    /** The meters of each member, created on first use. */
    public static final class Registry {
        private final MeterRegistry registry;
        private final Map<String, ConnectionMeters> byMember = new ConcurrentHashMap<>();

        public Registry(MeterRegistry registry) {
            this.registry = registry;
        }

        public ConnectionMeters forMember(String member) {
            return byMember.computeIfAbsent(member, m -> new ConnectionMeters(registry, m));
        }

        public int openConnections(String member) {
            ConnectionMeters meters = byMember.get(member);
            return meters == null ? 0 : meters.open.get();
        }
    }

    public void opened() {
        open.incrementAndGet();
        opened.increment();
    }

    /** A connection accepted and closed at once: the proxy holds --max-connections already. */
    public void refused() {
        refused.increment();
    }

    public void closed() {
        open.decrementAndGet();
    }

    public void idleTimedOut() {
        idleTimeouts.increment();
    }

    public void fromClient(int bytes) {
        bytesFromClients.increment(bytes);
    }

    public void fromUpstream(int bytes) {
        bytesFromUpstream.increment(bytes);
    }
}
