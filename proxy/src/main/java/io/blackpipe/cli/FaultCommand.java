package io.blackpipe.cli;

import io.blackpipe.fault.ErrorCodes;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "fault", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "Add, list and remove the fault rules of a running proxy (failCommand documents).",
        subcommands = {FaultAddCommand.class, FaultCommand.ListRules.class, FaultCommand.Remove.class, FaultCommand.Clear.class})
final class FaultCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a subcommand is required: add, list, remove or clear");
    }

    @Command(name = "list", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "List the rules in force: id, mode (with what is left of it), fault and its details (error, labels,"
                    + " block, delay, trickle, truncate), how many commands it faulted, commands and what else they match.")
    static final class ListRules extends AdminCommand {
        @Option(names = "--json", description = "Print the API's JSON instead of a table.")
        boolean json;

        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            if (json) {
                out.print(admin.call("GET", "rules", null).body());
                return 0;
            }
            BsonDocument answer = admin.get("rules");
            Table table = new Table("ID", "MODE", "FAULT", "DETAIL", "FIRED", "COMMANDS", "MATCHING");
            for (BsonValue value : answer.getArray("rules")) {
                BsonDocument entry = value.asDocument();
                BsonDocument rule = entry.getDocument("rule", new BsonDocument());
                BsonDocument data = rule.isDocument("data") ? rule.getDocument("data") : new BsonDocument();
                String fired = entry.isNumber("fired") ? Long.toString(entry.getNumber("fired").longValue()) : "?";
                table.row(text(entry, "id"), text(entry, "mode"), text(entry, "fault"), detail(data), fired, commands(data),
                        matching(data));
            }
            if (table.isEmpty()) {
                out.println("no rules");
            } else {
                table.print(out);
            }
            return 0;
        }

        private static String commands(BsonDocument data) {
            if (data.getBoolean("failAllCommands", BsonBoolean.FALSE).getValue()) {
                return "(all)";
            }
            List<String> names = new ArrayList<>();
            if (data.isArray("failCommands")) {
                data.getArray("failCommands").forEach(v -> names.add(v.isString() ? v.asString().getValue() : v.toString()));
            }
            return String.join(",", names);
        }

        /**
         * What tells two rules of the same fault apart: the error (name and code), its labels, the block before it,
         * the delay, the trickle, the truncation, the writeConcernError's code. Short key=value words, as MATCHING has,
         * so the table stays narrow.
         */
        static String detail(BsonDocument data) {
            List<String> parts = new ArrayList<>();
            if (data.isNumber("errorCode")) {
                parts.add("error=" + errorName(data.getNumber("errorCode").intValue()));
            } else if (data.isString("error")) { // the name as given (some codes have two), with its code
                String name = data.getString("error").getValue();
                Integer code = ErrorCodes.code(name);
                parts.add("error=" + name + (code == null ? "" : "(" + code + ")"));
            }
            if (data.isDocument("errorExtraInfo")) {
                parts.add("extra=" + String.join(",", data.getDocument("errorExtraInfo").keySet()));
            }
            if (data.isDocument("writeConcernError")) {
                BsonDocument error = data.getDocument("writeConcernError");
                parts.add("writeConcernError=" + (error.isNumber("code") ? errorName(error.getNumber("code").intValue()) : "?"));
            }
            if (data.isArray("errorLabels") && data.getArray("errorLabels").isEmpty()) {
                parts.add("labels=none"); // not those the server would add: not the same rule as one without the field
            } else if (data.isArray("errorLabels")) {
                List<String> labels = new ArrayList<>();
                data.getArray("errorLabels").forEach(v -> labels.add(v.isString() ? v.asString().getValue() : v.toString()));
                parts.add("labels=" + String.join(",", labels));
            }
            if (data.getBoolean("blockConnection", BsonBoolean.FALSE).getValue() && data.isNumber("blockTimeMS")) {
                parts.add("block=" + data.getNumber("blockTimeMS").longValue() + "ms");
            }
            if (data.isNumber("delayReplyMS")) {
                long jitter = data.isNumber("delayReplyJitterMS") ? data.getNumber("delayReplyJitterMS").longValue() : 0;
                parts.add("delay=" + data.getNumber("delayReplyMS").longValue() + "ms" + (jitter > 0 ? "+-" + jitter + "ms" : ""));
            }
            if (data.isNumber("trickleReplyBytes") && data.isNumber("trickleReplyIntervalMS")) {
                parts.add("trickle=" + data.getNumber("trickleReplyBytes").longValue() + "B/"
                        + data.getNumber("trickleReplyIntervalMS").longValue() + "ms");
            }
            if (data.isNumber("truncateReplyBytes")) {
                parts.add("truncate=" + data.getNumber("truncateReplyBytes").longValue() + "B");
            }
            if (data.isDocument("cannedReply")) {
                parts.add("reply=" + abbreviated(data.getDocument("cannedReply").toJson(), 60));
            }
            if (data.isString("topologyVersion")) {
                parts.add("topologyVersion=" + data.getString("topologyVersion").getValue());
            }
            return String.join(" ", parts);
        }

        private static String abbreviated(String text, int max) {
            return text.length() <= max ? text : text.substring(0, max - 3) + "...";
        }

        /** "NotWritablePrimary(10107)", or the code alone when blackpipe knows no name for it. */
        private static String errorName(int code) {
            String name = ErrorCodes.name(code);
            return ErrorCodes.code(name) == null ? Integer.toString(code) : name + "(" + code + ")";
        }

        private static String matching(BsonDocument data) {
            List<String> parts = new ArrayList<>();
            for (String[] field : new String[][] {{"member", "member"}, {"appName", "app"}, {"namespace", "namespace"},
                    {"attempt", "attempt"}}) {
                if (data.isString(field[0])) {
                    parts.add(field[1] + "=" + data.getString(field[0]).getValue());
                }
            }
            if (data.isDocument("commandMatches")) {
                parts.add("match=" + data.getDocument("commandMatches").toJson());
            }
            return String.join(" ", parts);
        }

        private static String text(BsonDocument document, String key) {
            return document.isString(key) ? document.getString(key).getValue() : "";
        }
    }

    @Command(name = "remove", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "Remove one rule by its id; exit 1 when there is no such rule.")
    static final class Remove extends AdminCommand {
        @Parameters(paramLabel = "ID", description = "The rule's id, as `fault add` printed it or `fault list` shows it.")
        String id;

        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            if (id.isBlank()) {
                // e.g. `fault remove "$ID"` with ID unset: never read as `fault clear`
                throw new ParameterException(spec.commandLine(), "ID must not be empty (`fault clear` removes every rule)");
            }
            admin.call("DELETE", "rules/" + AdminClient.encode(id), null);
            out.println("removed rule " + id);
            return 0;
        }
    }

    @Command(name = "clear", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "Remove every rule (a running scenario's rules too).")
    static final class Clear extends AdminCommand {
        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            admin.call("DELETE", "rules", null);
            out.println("cleared all rules");
            return 0;
        }
    }
}
