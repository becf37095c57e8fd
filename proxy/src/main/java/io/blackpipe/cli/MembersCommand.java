package io.blackpipe.cli;

import io.blackpipe.fault.Bandwidth;
import java.io.PrintWriter;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "members", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "The proxied members: upstream and advertised address, role, state (up, outage, blackhole, quiescing,"
                + " restarting), latency, bandwidth, idle timeout, open connections.")
final class MembersCommand extends AdminCommand {
    @Option(names = "--json", description = "Print the API's JSON instead of a table.")
    boolean json;

    @Override
    int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
        if (json) {
            out.print(admin.call("GET", "members", null).body());
            return 0;
        }
        print(admin.get("members"), out);
        return 0;
    }

    /** The "members" rows of an answer (GET members or connections) as a table. */
    static void print(BsonDocument answer, PrintWriter out) {
        Table table = new Table("UPSTREAM", "ADVERTISED", "ROLE", "STATE", "LATENCY", "BANDWIDTH", "IDLE", "CONNECTIONS");
        for (BsonValue value : answer.getArray("members")) {
            BsonDocument member = value.asDocument();
            table.row(ScenarioCommand.string(member, "upstream"), ScenarioCommand.string(member, "advertised"),
                    ScenarioCommand.string(member, "role"), ScenarioCommand.string(member, "state"), latency(member), bandwidth(member), idle(member),
                    ScenarioCommand.number(member, "openConnections"));
        }
        table.print(out);
    }

    /** "-" or "64KiB/s(replies)": the rate and its direction (a proxy older than bandwidths lists no rate; one older than directions narrows both ways). */
    private static String bandwidth(BsonDocument member) {
        long bytesPerSecond = member.getNumber("bandwidthBytesPerSecond", new BsonInt64(0)).longValue();
        String direction = member.isString("bandwidthDirection") ? member.getString("bandwidthDirection").getValue() : Bandwidth.DEFAULT_DIRECTION.label();
        return bytesPerSecond == 0 ? "-" : new Bandwidth(bytesPerSecond).describe().replace(" ", "") + "(" + direction + ")";
    }

    /** "-" or "30000ms/drop" (a proxy older than idle timeouts lists none). */
    private static String idle(BsonDocument member) {
        long after = member.getNumber("idleTimeoutMS", new BsonInt64(0)).longValue();
        return after == 0 ? "-" : after + "ms/" + member.getString("idleTimeoutThen").getValue();
    }

    /** "-", "200ms(replies)" or "200ms+/-50ms(both)" (ASCII: a terminal in the C locale prints no ±; an older proxy's acts on replies). */
    private static String latency(BsonDocument member) {
        long delay = member.getNumber("latencyMS").longValue();
        long jitter = member.getNumber("jitterMS").longValue();
        String direction = member.isString("latencyDirection") ? member.getString("latencyDirection").getValue() : io.blackpipe.fault.Latency.DEFAULT_DIRECTION.label();
        return delay == 0 && jitter == 0 ? "-" : delay + "ms" + (jitter == 0 ? "" : "+/-" + jitter + "ms") + "(" + direction + ")";
    }
}
