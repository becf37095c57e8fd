package io.blackpipe.pipe;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.testing.UpstreamLane;
import java.util.concurrent.TimeUnit;
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

    /** A client of the set through the proxy, with {@code options} ("socketTimeoutMS=500&...") and 20 s to select a server. */
    MongoClient client(String options) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(proxy.connectionString() + "&" + options))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(20, TimeUnit.SECONDS))
                .build());
    }

    /** The upstream host:port of the {@code index}th member (0: the first primary). */
    String upstream(int index) {
        return proxy.members().get(index).upstream().toString();
    }
}
