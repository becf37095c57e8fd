package io.blackpipe.cli;

import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.topology.Member;
import java.io.PrintWriter;

/** What the proxy prints once it listens: the member map, the admin address, the connection string. */
final class StartupBanner {
    private StartupBanner() {
    }

    static void print(PrintWriter out, ProxyServer proxy, String adminAddress) {
        int members = proxy.members().size();
        String name = proxy.deployment().isReplicaSet() ? "replica set " + proxy.deployment().setName()
                : members > 1 ? members + " " + proxy.deployment().kind() + " routers" : proxy.deployment().kind();
        out.println("blackpipe " + Version.current() + " proxying " + name);
        for (Member member : proxy.members()) {
            String via = member.dial().equals(member.upstream()) ? "" : " (dialled at " + member.dial() + ")";
            out.println("  upstream " + member.upstream() + via + " -> advertised " + member.advertised());
        }
        out.println("fault seed: " + proxy.seed() + " (replay with --seed " + proxy.seed() + ")");
        if (adminAddress != null) {
            out.println("admin: http://" + adminAddress + "/metrics  http://" + adminAddress + "/health");
        }
        out.println("connection string: " + proxy.connectionString());
        out.flush();
    }
}
