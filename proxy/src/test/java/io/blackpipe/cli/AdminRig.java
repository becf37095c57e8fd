package io.blackpipe.cli;

import io.blackpipe.admin.AdminServer;
import io.blackpipe.fault.Rule;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A real proxy and its admin server on a free port, guarded by {@link #TOKEN}: what the control commands'
 * tests run the CLI against (in-process, through {@link CliRun}).
 */
record AdminRig(ProxyServer proxy, AdminServer admin) implements AutoCloseable {
    static final String TOKEN = "cli-test-token";

    static AdminRig start(ProxyConfig config) {
        ProxyServer proxy = ProxyServer.start(config);
        return new AdminRig(proxy, AdminServer.start(proxy, "127.0.0.1", 0, TOKEN));
    }

    String url() {
        return "http://127.0.0.1:" + admin.port();
    }

    /** Runs a command against this rig's admin server, with the right token. */
    CliRun run(String... args) {
        List<String> all = new ArrayList<>(Arrays.asList(args));
        all.addAll(List.of("--admin", url(), "--admin-token", TOKEN));
        return CliRun.of(all.toArray(new String[0]));
    }

    List<String> ruleIds() {
        return proxy.rules().rules().stream().map(Rule::id).toList();
    }

    @Override
    public void close() {
        admin.close();
        proxy.close();
    }
}
