package io.blackpipe.cli;

import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.testing.UpstreamLane;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One {@link AdminRig} on the lane's upstream for every test of a class, started before the first and
 * closed after the last: {@code @RegisterExtension static final SharedAdminRig shared = new SharedAdminRig();}.
 * Each class has its own instance, so classes never share a rig.
 */
final class SharedAdminRig implements BeforeAllCallback, AfterAllCallback {
    private AdminRig rig;

    @Override
    public void beforeAll(ExtensionContext context) {
        rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()));
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (rig != null) {
            rig.close();
            rig = null;
        }
    }

    AdminRig rig() {
        return rig;
    }
}
