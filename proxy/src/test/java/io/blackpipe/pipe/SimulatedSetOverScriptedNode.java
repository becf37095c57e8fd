package io.blackpipe.pipe;

import io.blackpipe.testing.ScriptedMongod;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Three simulated members over one scripted node, fresh for each test: for what a simulated set
 * serves that jongodb lacks (serverStatus, replSetGetConfig, replSetGetStatus, replSetStepDown).
 * Register it with {@code @RegisterExtension}.
 */
final class SimulatedSetOverScriptedNode implements BeforeEachCallback, AfterEachCallback {
    private ScriptedMongod node;
    private ProxyServer proxy;

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        node = ScriptedMongod.start();
        proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + node.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME)
                .withSimulatedMembers(3));
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (proxy != null) {
            proxy.close();
        }
        if (node != null) {
            node.close();
        }
    }

    /** The one real node behind the simulated members. */
    ScriptedMongod node() {
        return node;
    }

    ProxyServer proxy() {
        return proxy;
    }
}
