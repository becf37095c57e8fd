package io.blackpipe.cli;

import io.blackpipe.upstream.LocalUpstream;
import io.blackpipe.upstream.LocalUpstreams;
import io.blackpipe.wire.BlockingCommandClient;
import io.blackpipe.wire.Tls;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "local", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "Start a local upstream (a 3-member mongod replica set when mongod is on PATH, else the jongodb engine"
                + " from the npm registry, installed once into $BLACKPIPE_CACHE, else $XDG_CACHE_HOME/blackpipe or ~/.cache/blackpipe;"
                + " --engine chooses) and blackpipe in front of it, check the path end to end, and print the connection string.")
final class LocalCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ListenOptions listen;

    @Mixin
    FaultOptions faults;

    @Mixin
    EngineOption engine;

    @Option(names = "--check", description = "Exit after the end-to-end check instead of serving until Ctrl-C.")
    boolean checkOnly;

    @Override
    public Integer call() throws Exception {
        Cli.check(spec, listen, faults);
        LocalUpstreams.Engine chosen = Cli.engine(spec, engine);
        try (StopSignals stop = StopSignals.install(spec.commandLine().getErr())) {
            return serve(stop, chosen);
        }
    }

    private int serve(StopSignals stop, LocalUpstreams.Engine chosen) throws Exception {
        try {
            faults.checkScenario(); // before the upstream starts, for seconds, to be refused
        } catch (FaultOptions.ScenarioRefused e) {
            spec.commandLine().getErr().println("blackpipe: " + EnvironmentErrors.namingTheVariable(spec.commandLine(), e));
            return 1;
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println("starting a local upstream ...");
        out.flush();
        LocalUpstream upstream;
        try {
            upstream = LocalUpstreams.start(chosen, "put mongod on PATH, or put the proxy in front of an existing replica set:"
                    + " blackpipe proxy --upstream URI");
        } catch (Exception e) {
            spec.commandLine().getErr().println("blackpipe: cannot start a local upstream: " + e.getMessage());
            return 1;
        }
        out.println("upstream: " + upstream.description());
        // for tests that start their own proxy in front of it (BlackPipe.start, -Dblackpipe.upstream)
        out.println("upstream uri: " + upstream.uri());
        out.flush();
        if (stop.requested()) { // a teardown while it started: stopped, as it would stop serving
            upstream.close();
            return 0;
        }
        RunningProxy running = null;
        try {
            running = RunningProxy.start(Cli.config(spec, listen, faults, upstream.uri()), listen.adminToken);
            if (!stop.requested()) {
                running.printBanner(out);
                upstream.caveats().forEach(caveat -> out.println("note: " + caveat));
            }
            // the check before the scenario: one whose first step is an outage failed it, and the start with it
            if (stop.requested() || !checkThroughProxy(running, out)) {
                running.close();
                upstream.close();
                return stop.requested() ? running.exitStatus(spec.commandLine().getErr()) : 1;
            }
            faults.startScenario(running.proxy);
        } catch (RuntimeException e) {
            if (running != null) {
                running.close();
            }
            upstream.close();
            spec.commandLine().getErr().println("blackpipe: " + EnvironmentErrors.namingTheVariable(spec.commandLine(), e));
            return 1;
        }
        if (checkOnly) {
            running.close();
            upstream.close();
            return running.exitStatus(spec.commandLine().getErr());
        }
        out.println("serving; press Ctrl-C to stop");
        out.flush();
        running.awaitShutdown(stop, upstream::close);
        return running.exitStatus(spec.commandLine().getErr());
    }

    /**
     * A hello through the first listener: the reply must name the proxy, not the upstream. Only a hello, which is counted
     * apart as monitoring: a ping here was counted as the application's, one attempt of ping nobody's app sent.
     */
    private static boolean checkThroughProxy(RunningProxy running, PrintWriter out) {
        var first = running.proxy.members().get(0);
        // The check only proves the path works; with TLS on the listeners it need not judge the certificate.
        Tls.Client tls = running.proxy.listenerTls() ? Tls.Client.trustingAnything() : Tls.Client.OFF;
        try (BlockingCommandClient client = new BlockingCommandClient(first.advertised().host(), first.advertised().port(), 5000, tls)) {
            BsonDocument hello = client.run("admin", new BsonDocument("hello", new BsonInt32(1)));
            String me = hello.isString("me") ? hello.getString("me").getValue() : "(standalone: no me)";
            boolean ok = hello.isNumber("ok") && hello.getNumber("ok").doubleValue() == 1.0;
            out.println("check: hello through " + first.advertised() + " answered me=" + me
                    + (ok ? ", ok: 1" : ": " + hello.toJson()));
            boolean named = !hello.isString("me") || me.equals(first.advertised().toString());
            if (!named) {
                out.println("check FAILED: hello names " + me + " instead of the proxy");
            }
            out.flush();
            return named && ok;
        } catch (Exception e) {
            out.println("check FAILED: " + e);
            out.flush();
            return false;
        }
    }
}
