package io.blackpipe.pipe;

import com.mongodb.client.MongoClient;
import io.blackpipe.testing.UpstreamLane;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Three simulated members over one node of the test lane, fresh for each test, and a client
 * straight to that node, to see what the server holds. Register it with {@code @RegisterExtension}.
 */
final class SimulatedSetOverTheLane implements BeforeEachCallback, AfterEachCallback {
    private ProxyServer proxy;
    private MongoClient direct;

    @Override
    public void beforeEach(ExtensionContext context) {
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()).withSimulatedMembers(3));
        direct = UpstreamLane.directClient();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (direct != null) {
            direct.close();
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    ProxyServer proxy() {
        return proxy;
    }

    /** A client of the one real node, past the proxy. */
    MongoClient direct() {
        return direct;
    }
}
