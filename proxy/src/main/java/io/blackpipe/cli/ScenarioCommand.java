package io.blackpipe.cli;

import io.blackpipe.admin.AdminHttp;
import io.blackpipe.fault.CommandSpelling;
import io.blackpipe.fault.Plural;
import io.blackpipe.fault.Rule;
import io.blackpipe.fault.RuleParser;
import io.blackpipe.fault.Scenario;
import io.blackpipe.fault.ScenarioException;
import io.blackpipe.fault.ScenarioLoader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "scenario", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "Run, validate, inspect and stop scenarios (see fault-scripts/).",
        subcommands = {ScenarioCommand.Run.class, ScenarioCommand.Validate.class, ScenarioCommand.Status.class,
                ScenarioCommand.Stop.class})
final class ScenarioCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a subcommand is required: run, validate, status or stop");
    }

    /** Reads and checks a scenario (file or bundled name) offline; the failure message is "file:line: field: message". */
    static Scenario check(ScenarioArgument scenario) throws ScenarioException, IOException {
        return scenario.load(ScenarioLoader.offline(new RuleParser(0)));
    }

    static String summary(Scenario scenario) {
        return "scenario '" + scenario.name() + "': " + Plural.of(scenario.rules().size(), "rule") + ", "
                + Plural.of(scenario.timeline().size(), "timeline step");
    }

    /** A note on standard error for each rule's command name that looks misspelt: the scenario is valid, and runs as written. */
    static void noteMisspeltCommands(Scenario scenario, ScenarioArgument argument, PrintWriter err) {
        List<Rule> rules = new ArrayList<>(scenario.rules());
        scenario.timeline().stream().map(Scenario.Step::rule).filter(Objects::nonNull).forEach(rules::add);
        Set<String> noted = new HashSet<>(); // a repeated add's copies are one rule to the reader
        for (Rule rule : rules) {
            for (String note : CommandSpelling.notes(rule.source())) {
                if (noted.add(rule.id() + note)) {
                    err.println("note: " + argument.source() + ": rule '" + rule.id() + "': " + note);
                }
            }
        }
        err.flush();
    }

    @Command(name = "validate", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = {"Check a scenario file (or bundled scenario, by name) offline (no proxy needed): every rule, step and duration.",
                    "Exit 0 when it is valid; exit 1 with file:line: field: message when not.",
                    "A member must be primary, secondary, all or a host:port; whether that host:port is one of the deployment's is checked by the proxy when the scenario runs."})
    static final class Validate implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "FILE|NAME", converter = ScenarioArgument.Typed.class,
                description = "The scenario (YAML or JSON); when no such file exists, the bundled scenario of that name.")
        Path file;

        // Taken, not used: a wrapper that adds --admin to every command got exit 2 here, beside `scenario run`, which uses it.
        @Option(names = "--admin", paramLabel = "URL",
                description = "Accepted and unused (validate asks no proxy), for wrappers that pass --admin to every scenario command.")
        String unusedAdmin;

        @Option(names = "--admin-token", paramLabel = "TOKEN", description = "Accepted and unused, as --admin is.")
        String unusedAdminToken;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            ScenarioArgument argument = new ScenarioArgument(file);
            try {
                Scenario scenario = check(argument);
                out.println(argument.source() + ": valid (" + summary(scenario) + ")");
                out.flush();
                noteMisspeltCommands(scenario, argument, err);
                return 0;
            } catch (ScenarioException e) {
                err.println(e.getMessage());
            } catch (IOException e) {
                err.println("blackpipe: cannot read " + argument.cannotRead(e));
            }
            err.flush();
            return 1;
        }
    }

    @Command(name = "run", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = {"Check a scenario file (or bundled scenario, by name), then run it on the proxy (stopping any scenario already running).",
                    "Its rules go live at once; its timeline steps fire at their offsets."})
    static final class Run extends AdminCommand {
        @Parameters(paramLabel = "FILE|NAME", converter = ScenarioArgument.Typed.class,
                description = "The scenario (YAML or JSON); when no such file exists, the bundled scenario of that name.")
        Path file;

        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            ScenarioArgument argument = new ScenarioArgument(file);
            String text;
            try {
                text = argument.text();
                noteMisspeltCommands(check(argument), argument, spec.commandLine().getErr());
            } catch (IOException e) {
                throw new AdminClient.Failure("cannot read " + argument.cannotRead(e));
            } catch (ScenarioException e) {
                throw new AdminClient.Failure(e.getMessage());
            }
            BsonDocument status;
            try {
                status = admin.json("POST", "scenario", text);
            } catch (AdminClient.Failure e) {
                throw new AdminClient.Failure(AdminHttp.namingTheScenarioFile(e.getMessage(), argument.source()));
            }
            out.println("started " + describe(status));
            return 0;
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "Show the scenario's state (idle, running, finished, stopped), the steps done and left.")
    static final class Status extends AdminCommand {
        @Option(names = "--json", description = "Print the API's JSON instead of text.")
        boolean json;

        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            if (json) {
                out.print(admin.call("GET", "scenario", null).body());
                return 0;
            }
            BsonDocument status = admin.get("scenario");
            out.println("state: " + string(status, "state"));
            if (!status.containsKey("name")) {
                return 0;
            }
            out.println("scenario: " + string(status, "name")
                    + (string(status, "description").isEmpty() ? "" : " - " + string(status, "description")));
            if (status.containsKey("endedAt")) { // its elapsed time stopped at its end: how long it ran, not how long ago it began
                out.println("started: " + string(status, "startedAt") + ", ended: " + string(status, "endedAt") + " (ran "
                        + number(status, "elapsedMillis") + " ms)");
            } else {
                out.println("started: " + string(status, "startedAt") + " (" + number(status, "elapsedMillis") + " ms ago)");
            }
            // an add step puts one more: "rules: 1" read wrong with two of its rules in force
            out.println("rules: " + number(status, "rules") + " at its start, " + number(status, "rulesInForce") + " of its own in force now");
            out.println("steps done:" + (status.getArray("stepsDone", new org.bson.BsonArray()).isEmpty() ? " none" : ""));
            for (BsonValue step : status.getArray("stepsDone", new org.bson.BsonArray())) {
                out.println("  " + (step.isString() ? step.asString().getValue() : step.toString()));
            }
            out.println("steps left: " + number(status, "stepsLeft"));
            if (number(status, "stepsLeft").equals("0") && "running".equals(string(status, "state"))) {
                // a scenario without an end step never finishes by itself: say what keeps it running
                out.println("in force until an `end` step or `blackpipe scenario stop` (which removes its rules"
                        + " and restores the members it faulted)");
            }
            return 0;
        }
    }

    @Command(name = "stop", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "Stop the running scenario: cancel its pending steps, remove its rules, restore members it faulted.")
    static final class Stop extends AdminCommand {
        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            BsonDocument status = admin.json("DELETE", "scenario", null);
            out.println(status.containsKey("name") ? "scenario '" + string(status, "name") + "' is " + string(status, "state")
                    : "no scenario (state: " + string(status, "state") + ")");
            return 0;
        }
    }

    static String describe(BsonDocument status) {
        return "scenario '" + string(status, "name") + "' (" + string(status, "state") + "): " + counted(status, "rules", "rule")
                + ", " + counted(status, "stepsLeft", "timeline step") + " to come";
    }

    static String string(BsonDocument document, String key) {
        return document.isString(key) ? document.getString(key).getValue() : "";
    }

    /** "1 rule", "3 rules"; "? rules" when the proxy's answer lacks the number. */
    static String counted(BsonDocument document, String key, String noun) {
        return document.isNumber(key) ? Plural.of(document.getNumber(key).longValue(), noun) : "? " + noun + "s";
    }

    static String number(BsonDocument document, String key) {
        return document.isNumber(key) ? Long.toString(document.getNumber(key).longValue()) : "?";
    }
}
