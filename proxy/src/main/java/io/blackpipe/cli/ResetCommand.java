package io.blackpipe.cli;

import java.io.PrintWriter;
import org.bson.BsonDocument;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "reset", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = {"The clean slate between test cases: the scenario stopped, every rule removed and its fired count"
                + " zeroed, every member restored, a simulated set's first member primary again, the sessions seen"
                + " forgotten (the next command is no retry of an earlier one), the seeded draws started over (a probability"
                + " rule decides as after the start). Counters and history are kept: they only grow.",
                "Prints the proxy's clock at the reset, for `blackpipe history --since`."})
final class ResetCommand extends AdminCommand {
    @Option(names = "--json", description = "Print the API's JSON ({ok, at}) instead of a line.")
    boolean json;

    @Override
    int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
        if (json) {
            out.print(admin.call("POST", "reset", null).body());
            return 0;
        }
        BsonDocument answer = admin.json("POST", "reset", null);
        out.println("reset at " + ScenarioCommand.string(answer, "at")
                + ": scenario stopped, rules and fired counts cleared, members restored, sessions forgotten,"
                + " seeded draws started over");
        return 0;
    }
}
