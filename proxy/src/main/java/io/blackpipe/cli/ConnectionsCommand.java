package io.blackpipe.cli;

import io.blackpipe.fault.Plural;
import java.io.PrintWriter;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

@Command(name = "connections", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "List the proxy's client connections, or reset all of a member's at once.",
        subcommands = {ConnectionsCommand.ListConnections.class, ConnectionsCommand.Reset.class})
final class ConnectionsCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a subcommand is required: list or reset");
    }

    @Command(name = "list", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "The members with their counts of open client connections (the members table), then each open"
                    + " connection: its id (as history entries give it), member, client address, appName and when it opened.")
    static final class ListConnections extends AdminCommand {
        @Option(names = "--json", description = "Print the API's JSON instead of tables.")
        boolean json;

        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            if (json) {
                out.print(admin.call("GET", "connections", null).body());
                return 0;
            }
            BsonDocument answer = admin.get("connections");
            MembersCommand.print(answer, out);
            if (answer.isArray("connections")) { // a proxy older than the listing gives the members' counts alone
                Table connections = new Table("ID", "MEMBER", "CLIENT", "APP", "OPENED");
                for (BsonValue value : answer.getArray("connections")) {
                    BsonDocument connection = value.asDocument();
                    connections.row(ScenarioCommand.number(connection, "id"), ScenarioCommand.string(connection, "member"),
                            ScenarioCommand.string(connection, "client"), ScenarioCommand.string(connection, "app"),
                            ScenarioCommand.string(connection, "openedAt"));
                }
                out.println();
                connections.print(out);
            }
            return 0;
        }
    }

    @Command(name = "reset", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "Reset (TCP RST) every open client connection of a member; clients see a network error.")
    static final class Reset extends AdminCommand {
        @Option(names = "--member", paramLabel = "MEMBER", required = true,
                description = "primary, secondary (every secondary), all, or a member's host:port (upstream or advertised).")
        String member;

        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            String path = "connections/reset?member=" + AdminClient.encode(member);
            BsonDocument answer = admin.parsed("POST", path, admin.callOnMember("POST", path,
                    unknown -> new ParameterException(spec.commandLine(), "--member: " + unknown)));
            out.println("reset " + (answer.isNumber("reset") ? Plural.of(answer.getNumber("reset").longValue(), "connection")
                    : "? connections") + " of " + member);
            return 0;
        }
    }
}
