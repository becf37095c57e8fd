package io.blackpipe.cli;

import static io.blackpipe.cli.FaultActionFlags.add;

import io.blackpipe.fault.CommandSpelling;
import io.blackpipe.fault.JsonDocuments;
import io.blackpipe.fault.RuleException;
import io.blackpipe.fault.RuleParser;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonString;
import org.bson.json.JsonParseException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParseResult;

@Command(name = "add", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = {"Add a fault rule to a running proxy and print its id.",
                "Give the rule as a failCommand document (JSON), or build it from flags, e.g.",
                "  fault add --command insert --error NotWritablePrimary --times 1",
                "A rule has one action (--error/--error-code, --reset, --close, --drop-reply, --truncate, --hang, --delay,"
                        + " --trickle or --reply);"
                        + " --block holds the connection first and may come alone or with one of them."},
        sortOptions = false)
final class FaultAddCommand extends AdminCommand {
    /** Which attempt of an operation a rule matches. */
    enum Attempt { first, retry }

    @Parameters(index = "0", arity = "0..1", paramLabel = "JSON",
            description = "The rule as JSON: {configureFailPoint: \"failCommand\", mode: ..., data: {...}}.")
    String jsonArgument;

    @Option(names = "--json", paramLabel = "JSON", description = "The rule as JSON (same as the positional argument).")
    String jsonOption;

    @Option(names = "--command", paramLabel = "NAME", split = ",",
            description = "A command the rule faults (insert, find, update, ...); repeatable or comma-separated.")
    List<String> commands;

    @Option(names = "--all-commands", description = "Fault every command instead of named ones (failAllCommands); "
            + "hellos too, except with --delay, --trickle, --reply, --drop-reply or --truncate.")
    boolean allCommands;

    @Mixin
    FaultActionFlags action = new FaultActionFlags();

    @Option(names = "--times", paramLabel = "N", description = "Fire on the next N matching commands (N from 1), then stop (mode {times: N}).")
    Long times;

    @Option(names = "--skip", paramLabel = "N", description = "Let N matching commands pass, then fire on every one (mode {skip: N}).")
    Long skip;

    @Option(names = "--probability", paramLabel = "P", description = "Fire on each matching command with probability P, 0 to 1"
            + " (mode {activationProbability: P}). Default mode without --times/--skip/--probability: alwaysOn.")
    Double probability;

    @Option(names = "--member", paramLabel = "MEMBER", description = "Only on this member: primary, secondary or host:port;"
            + " the proxy refuses one it does not front, naming those it does.")
    String member;

    @Option(names = "--app", paramLabel = "NAME", description = "Only for clients with this appName (\"\": clients that send none).")
    String app;

    @Option(names = "--namespace", paramLabel = "DB.COLL", description = "Only for commands on this namespace.")
    String namespace;

    @Option(names = "--match", paramLabel = "JSON", description = "Only on commands holding these fields, by dotted path into"
            + " the command (an insert's documents, an update's updates included), e.g. '{\"documents.sku\": \"A1\"}'"
            + " or '{\"documents.qty\": {\"$gt\": 100}}' (commandMatches: values and field operators as in a query).")
    String match;

    private static final String MATCH_FIELD = "data.commandMatches";

    @Option(names = "--attempt", paramLabel = "first|retry", description = "Only the first attempt of an operation, or only retries.")
    Attempt attempt;

    @Option(names = "--id", paramLabel = "ID", description = "Id of the rule (default: one is generated); an existing rule with it is replaced.")
    String id;

    @Override
    int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
        BsonDocument rule = rule();
        AdminClient.Answer sent = admin.send("POST", "rules", JsonDocuments.typedJson(rule));
        if (sent.status() == 400 && json() == null) {
            flagTheProxyRefused(sent.body());
        }
        if (!sent.ok()) {
            throw admin.refused("POST", "rules", sent);
        }
        BsonDocument answer = BsonDocument.parse(sent.body());
        out.println(answer.isString("id") ? answer.getString("id").getValue() : answer.toJson());
        PrintWriter err = spec.commandLine().getErr();
        CommandSpelling.notes(rule).forEach(note -> err.println("note: " + (json() == null ? "--command " : "data.failCommands: ") + note));
        err.flush();
        return 0;
    }

    /**
     * What only the proxy can check of the rule the flags make (that --member is one of its members) is a usage
     * error naming the flag, as what the flags are checked for here: the proxy's 400 names the rule's field.
     */
    private void flagTheProxyRefused(String body) {
        String error;
        try {
            error = BsonDocument.parse(body).getString("error").getValue();
        } catch (RuntimeException notTheApisError) {
            return;
        }
        int colon = error.indexOf(": ");
        String field = colon < 0 ? null : error.substring(0, colon);
        if (field != null && !flag(field).equals(field)) {
            throw usage(flag(field) + ": " + error.substring(colon + 2) + " (the proxy refused the rule the flags make)");
        }
    }

    /** The rule to send; flag combinations that make no rule are usage errors naming the flags. */
    BsonDocument rule() {
        if (id != null && id.isBlank()) {
            throw usage("--id must not be empty (leave it out for a generated id)");
        }
        String json = json();
        if (json != null) {
            List<String> flags = ruleFlags();
            if (!flags.isEmpty()) {
                throw usage("give the rule as JSON or build it from flags, not both (got JSON and " + String.join(", ", flags) + ")");
            }
            BsonDocument document;
            try {
                document = JsonDocuments.parseOne(json);
            } catch (JsonParseException | org.bson.BsonInvalidOperationException e) {
                throw usage("JSON: not a JSON document: " + e.getMessage());
            }
            if (RuleParser.isOff(document)) { // the API would answer with its own route, DELETE /api/v1/rules/{id}
                throw usage("JSON: mode: \"off\" removes a rule: `fault remove ID` (or `fault clear`) instead");
            }
            if (id != null) {
                document.put("id", new BsonString(id));
            } else if (document.containsKey("id") && !document.isString("id")) {
                throw usage("JSON: id: must be a string, got " + document.get("id").getBsonType().name().toLowerCase(Locale.ROOT));
            } else if (document.isString("id") && document.getString("id").getValue().isBlank()) {
                throw usage("JSON: id: must not be empty (leave it out for a generated id)");
            }
            return document;
        }
        return fromFlags();
    }

    private String json() {
        if (jsonArgument != null && jsonOption != null) {
            throw usage("give the rule as JSON once: the JSON argument or --json, not both");
        }
        return jsonArgument != null ? jsonArgument : jsonOption;
    }

    /** The flags given that build a rule (everything but --id). */
    private List<String> ruleFlags() {
        List<String> given = new ArrayList<>();
        add(given, commands != null && !commands.isEmpty(), "--command");
        add(given, allCommands, "--all-commands");
        given.addAll(action.given());
        add(given, times != null, "--times");
        add(given, skip != null, "--skip");
        add(given, probability != null, "--probability");
        add(given, member != null, "--member");
        add(given, app != null, "--app");
        add(given, namespace != null, "--namespace");
        add(given, match != null, "--match");
        add(given, attempt != null, "--attempt");
        return given;
    }

    private BsonDocument fromFlags() {
        // picocli's split drops the empty items at the end ("insert," is [insert]): check what was typed
        if (typed("--command").stream().anyMatch(String::isBlank)) {
            throw usage("--command: a command name must not be empty, got '" + String.join("', '", typedValues("--command"))
                    + "' (name commands such as insert, or use --all-commands)");
        }
        if (action.labels != null) {
            action.labels = typed("--labels"); // with the empty ones, which the rule refuses naming --labels
        }
        boolean named = commands != null && !commands.isEmpty();
        if (named && allCommands) {
            throw usage("--command and --all-commands both say which commands; give one of them");
        }
        if (!named && !allCommands) {
            throw usage("--command is required: which commands the rule faults (e.g. --command insert; or --all-commands),"
                    + " or give the rule as JSON");
        }
        action.check(this::usage);
        if (namespace != null && namespace.isBlank()) {
            // mongod takes namespace: "" in a failCommand document and never matches it; a flag typed empty is a mistake
            throw usage("--namespace must not be empty: a rule on namespace '" + namespace + "' would never fire"
                    + " (give DB.COLL or DB, or leave it out for every namespace)");
        }

        BsonDocument data = new BsonDocument();
        if (allCommands) {
            data.put("failAllCommands", BsonBoolean.TRUE);
        } else {
            BsonArray failCommands = new BsonArray();
            commands.stream().map(String::strip).distinct().forEach(c -> failCommands.add(new BsonString(c)));
            data.put("failCommands", failCommands);
        }
        action.putInto(data, this::usage);
        putString(data, "appName", app);
        putString(data, "namespace", namespace);
        putString(data, "member", member);
        if (match != null) {
            try {
                data.put("commandMatches", JsonDocuments.parseOne(match));
            } catch (JsonParseException | org.bson.BsonInvalidOperationException e) {
                throw usage("--match: not a JSON document: " + e.getMessage());
            }
        }
        if (attempt != null) {
            data.put("attempt", new BsonString(attempt.name()));
        }
        BsonDocument rule = new BsonDocument("configureFailPoint", new BsonString("failCommand"))
                .append("mode", mode())
                .append("data", data);
        if (id != null) {
            rule.put("id", new BsonString(id));
        }
        try {
            new RuleParser(0).parse(id == null ? "check" : id, rule); // everything the flags say, checked before anything is sent
        } catch (RuleException e) {
            String where = e.field().startsWith(MATCH_FIELD + ".") // and the path in the pattern, which the user typed too
                    ? flag(e.field()) + ": " + e.field().substring(MATCH_FIELD.length() + 1) : flag(e.field());
            throw usage(where + ": " + e.getMessage().substring(e.field().length() + 2) + " (the flags make no valid rule)");
        }
        return rule;
    }

    /** The flag that set a field of the rule the flags build, so an error names what the user typed. */
    private String flag(String field) {
        if (field.startsWith(MATCH_FIELD)) {
            return "--match";
        }
        return switch (field) {
            case "id" -> "--id";
            case "mode", "mode.times", "mode.skip", "mode.activationProbability" ->
                    times != null ? "--times" : skip != null ? "--skip" : probability != null ? "--probability" : field;
            case "data.member" -> "--member";
            case "data.appName" -> "--app";
            case "data.namespace" -> "--namespace";
            case "data.failCommands" -> "--command";
            case "data.failAllCommands" -> "--all-commands";
            case "data.attempt" -> "--attempt";
            default -> action.flag(field);
        };
    }

    private org.bson.BsonValue mode() {
        List<String> modes = new ArrayList<>();
        add(modes, times != null, "--times");
        add(modes, skip != null, "--skip");
        add(modes, probability != null, "--probability");
        if (modes.size() > 1) {
            throw usage(String.join(" and ", modes) + " are two modes; give at most one (default: alwaysOn)");
        }
        if (times != null) {
            if (times < 1) { // the proxy takes {times: 0}, which fires once as on the server; N here is how many
                throw usage("--times must be at least 1, got " + times);
            }
            return new BsonDocument("times", JsonDocuments.integer(times));
        }
        if (skip != null) {
            if (skip < 0) {
                throw usage("--skip must not be negative, got " + skip);
            }
            return new BsonDocument("skip", JsonDocuments.integer(skip));
        }
        if (probability != null) {
            if (!(probability >= 0 && probability <= 1)) {
                throw usage("--probability must be from 0 to 1, got " + probability);
            }
            return new BsonDocument("activationProbability", new BsonDouble(probability));
        }
        return new BsonString("alwaysOn");
    }

    /** A comma-separated flag's items as typed, empty ones included (also those at the end, which picocli's split drops). */
    private List<String> typed(String flag) {
        return typedValues(flag).stream().flatMap(value -> Arrays.stream(value.split(",", -1))).toList();
    }

    private List<String> typedValues(String flag) {
        ParseResult parsed = spec.commandLine().getParseResult();
        OptionSpec option = parsed == null ? null : parsed.matchedOption(flag);
        return option == null ? List.of() : option.originalStringValues();
    }

    private static void putString(BsonDocument data, String key, String value) {
        if (value != null) {
            data.put(key, new BsonString(value));
        }
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
