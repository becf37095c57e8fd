package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.Readme;
import io.blackpipe.testing.Readme.CodeLine;
import io.blackpipe.testing.Readme.Paragraph;
import io.blackpipe.testing.Readme.Span;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;

/**
 * Every blackpipe command and flag the README names exists, on the command it is named for: in shell
 * blocks (`blackpipe fault add --command insert ...`, the flags in their comments too), in inline code
 * (`blackpipe health --admin URL`, `history --follow`), and in prose that lists a command's flags
 * ("`fault add` flags: `--command NAME` ..."): a bare flag belongs to the last command its paragraph
 * names, else to the command its section is about. The proxy's option table matches `proxy` both ways.
 */
class ReadmeCliTruthTest {
    /** `blackpipe`, `./blackpipe` or `java ... -jar .../blackpipe.jar`, then the command's words. */
    private static final Pattern INVOCATION = Pattern.compile("(?:^|[\\s(])(?:java\\s.*?-jar\\s+\\S*blackpipe\\.jar|\\./blackpipe|blackpipe)(?=\\s|$)(.*)");
    private static final Pattern FLAG = Pattern.compile("(?<![\\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z](?![\\w:+.=-]))");
    private static final String PROXY_SECTION = "Proxy your own deployment";
    /** What a bare flag in a section's prose is a flag of, when its paragraph names no command. */
    private static final Map<String, String> SECTION_COMMAND = Map.of(
            "Quick start", "report",
            PROXY_SECTION, "proxy",
            "Break things: rules, scenarios, deployment faults", "proxy",
            "Counters, metrics, history", "proxy",
            "Run as a sidecar", "proxy",
            "Use it from Java tests", "proxy",
            "How it stays transparent", "proxy",
            "Security", "proxy");
    /** Sections whose flags are another program's (bench/run's), not blackpipe's. */
    private static final Set<String> OTHER_PROGRAMS = Set.of("Benchmark");
    /** The Control section's prose speaks of every control command at once: its flags must be on each. */
    private static final String CONTROL_SECTION = "Control a running proxy";
    private static final String LOCAL_TAKES_PROXYS_OPTIONS = "`local` takes `proxy`'s options";

    private final CommandLine root = Main.commandLine();
    private final Readme readme = Readme.read();
    private final List<String> problems = new ArrayList<>();
    private final Set<CommandLine> mentioned = new LinkedHashSet<>();
    /** The options README.md names with their own command (an OptionSpec belongs to one command). */
    private final Set<OptionSpec> documented = new LinkedHashSet<>();

    @Test
    void everyCommandAndFlagTheReadmeNamesExistsOnThatCommand() {
        checkShellBlocks();
        checkProse();
        assertTrue(problems.isEmpty(), "README.md names commands or flags the CLI does not have:\n" + String.join("\n", problems));
    }

    @Test
    void everyCommandTheCliHasIsInTheReadme() {
        checkShellBlocks();
        checkProse();
        List<String> missing = new ArrayList<>();
        for (CommandLine command : allCommands(root)) {
            boolean shown = mentioned.stream().anyMatch(m -> m == command || isAncestor(command, m));
            if (!shown && !command.getCommandName().equals("help")) {
                missing.add("`blackpipe " + path(command) + "` (" + description(command) + ")");
            }
        }
        assertTrue(missing.isEmpty(), "commands of `blackpipe --help` that README.md never shows in use:\n" + String.join("\n", missing));
    }

    @Test
    void everyOptionOfEveryCommandIsInTheReadmeWithItsCommand() {
        checkShellBlocks();
        checkProse();
        countLocalsSharedOptions();
        List<String> missing = new ArrayList<>();
        for (CommandLine command : allCommands(root)) {
            for (OptionSpec option : command.getCommandSpec().options()) {
                if (!option.usageHelp() && !option.versionHelp() && !documented.contains(option)) {
                    missing.add("`blackpipe " + path(command) + " " + option.longestName() + "` (" + String.join(" ", option.description()) + ")");
                }
            }
        }
        assertTrue(missing.isEmpty(), "options README.md never names with their command:\n" + String.join("\n", missing));
    }

    @Test
    void everyCommandTakesHelp() {
        // the Control section promises "`--help` works on every command and subcommand"
        List<String> without = allCommands(root).stream().filter(c -> c.getCommandSpec().findOption("--help") == null).map(ReadmeCliTruthTest::path).toList();
        assertTrue(without.isEmpty(), "commands without --help: " + without);
    }

    @Test
    void theProxyOptionTableMatchesTheProxyCommand() {
        CommandSpec proxy = root.getSubcommands().get("proxy").getCommandSpec();
        Set<String> rowed = new LinkedHashSet<>();
        List<Paragraph> rows = readme.tableRows(PROXY_SECTION);
        assertTrue(!rows.isEmpty(), "README.md's '" + PROXY_SECTION + "' has an option table");
        for (Paragraph row : rows) {
            List<String> cells = Readme.cells(row.text());
            String where = "README.md:" + row.line() + ": ";
            if (cells.size() != 4) {
                problems.add(where + "an option row has 4 cells (option | env | default | meaning), this one " + cells.size());
                continue;
            }
            String[] written = Readme.spans(cells.get(0)).stream().findFirst().orElse("").split("\\s+", 2);
            OptionSpec option = proxy.findOption(written[0]);
            if (option == null) {
                problems.add(where + "`proxy` has no option " + written[0]);
                continue;
            }
            rowed.add(option.longestName());
            if (written.length > 1 && !written[1].equals(option.paramLabel())) {
                problems.add(where + written[0] + "'s value is written " + written[1] + ", the CLI's --help says " + option.paramLabel());
            }
            String variable = EnvironmentDefaults.variableOf(option);
            String env = Readme.spans(cells.get(1)).stream().findFirst().orElse(null);
            if (variable == null ? env != null : !variable.equals(env)) {
                problems.add(where + written[0] + " reads " + (variable == null ? "no variable" : variable) + ", the row says " + (env == null ? "none" : env));
            }
            checkDefault(where, written[0], fallback(option), cells.get(2), proxy);
        }
        for (OptionSpec option : proxy.options()) {
            if (!option.usageHelp() && !option.versionHelp() && !rowed.contains(option.longestName())) {
                problems.add("README.md's option table (" + PROXY_SECTION + ") has no row for `proxy " + option.longestName() + "`");
            }
        }
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }

    /**
     * README.md says `local` takes `proxy`'s options but --upstream, rather than listing them twice: when it
     * says so, that must hold, and then each such option of `local` is documented as `proxy`'s is.
     */
    private void countLocalsSharedOptions() {
        if (!String.join(" ", readme.lines()).contains(LOCAL_TAKES_PROXYS_OPTIONS)) {
            return;
        }
        CommandSpec local = root.getSubcommands().get("local").getCommandSpec();
        List<String> lacking = new ArrayList<>();
        for (OptionSpec option : root.getSubcommands().get("proxy").getCommandSpec().options()) {
            OptionSpec same = local.findOption(option.longestName());
            if (same == null && !option.longestName().equals("--upstream") && !option.usageHelp() && !option.versionHelp()) {
                lacking.add(option.longestName());
            } else if (same != null && documented.contains(option)) {
                documented.add(same);
            }
        }
        assertTrue(lacking.isEmpty(), "README.md says " + LOCAL_TAKES_PROXYS_OPTIONS + ", and `local` lacks " + lacking);
    }

    /** The default cell gives the annotation's fallback as its first code span; without one, no value of its own. */
    private void checkDefault(String where, String name, String fallback, String cell, CommandSpec proxy) {
        String first = Readme.spans(cell).stream().findFirst().orElse(null);
        if (fallback != null && !fallback.equals(first)) {
            problems.add(where + name + " defaults to " + fallback + ", the row says " + (first == null ? "'" + cell + "'" : first));
        } else if (fallback == null && first != null && proxy.findOption(first) == null) {
            problems.add(where + name + " has no default value, the row says " + first);
        }
    }

    /** The value after ":-" in the option's {@code ${env:NAME:-value}} default, or its plain default; null for none. */
    private static String fallback(OptionSpec option) {
        if (!(option.userObject() instanceof Field field) || !field.isAnnotationPresent(Option.class)) {
            return null;
        }
        String annotated = field.getAnnotation(Option.class).defaultValue();
        Matcher env = Pattern.compile("\\$\\{env:\\w+(?::-(.*))?}").matcher(annotated);
        if (env.matches()) {
            return env.group(1);
        }
        return annotated.equals(Option.NULL_VALUE) || annotated.startsWith("__") ? null : annotated;
    }

    private void checkShellBlocks() {
        CommandLine lastCommand = null;
        boolean otherProgram = false;
        String pending = "";
        int pendingLine = 0;
        for (CodeLine code : readme.codeLines()) {
            if (!code.language().isEmpty() && !code.language().equals("sh")) {
                continue;
            }
            String text = code.text();
            int hash = text.indexOf('#');
            String command = hash >= 0 ? text.substring(0, hash) : text;
            String comment = hash >= 0 ? text.substring(hash + 1) : "";
            if (pending.isEmpty()) {
                pendingLine = code.line();
            }
            pending += " " + command.strip();
            boolean continued = pending.endsWith("\\");
            if (continued) {
                pending = pending.substring(0, pending.length() - 1);
            } else {
                Matcher invocation = INVOCATION.matcher(pending.split("[|)]")[0]);
                if (invocation.find()) {
                    otherProgram = false;
                    lastCommand = mention(pendingLine, invocation.group(1), "`" + pending.strip() + "`");
                } else if (!command.isBlank() || text.isBlank()) {
                    lastCommand = null;
                    otherProgram = !command.isBlank(); // ./bench/run's comment speaks of bench/run's flags
                }
                pending = "";
            }
            if (!otherProgram || lastCommand != null) {
                checkComment(code.line(), comment, lastCommand);
            }
        }
    }

    /** A comment's bare flags are its command's; its code spans are read as inline code. */
    private void checkComment(int line, String comment, CommandLine command) {
        String withoutSpans = comment.replaceAll("`[^`]*`", " ");
        for (String flag : flags(withoutSpans)) {
            if (command == null) {
                problems.add("README.md:" + line + ": the comment's " + flag + " follows no blackpipe command");
            } else if (!has(command, flag)) {
                problems.add("README.md:" + line + ": the comment's " + flag + " is no option of `blackpipe " + path(command) + "`");
            }
        }
        for (String span : Readme.spans(comment)) {
            inlineCommand(line, span);
        }
    }

    private void checkProse() {
        for (Paragraph paragraph : readme.paragraphs()) {
            if (paragraph.text().startsWith("#")) {
                continue;
            }
            CommandLine context = null;
            for (Span span : paragraph.spans()) {
                CommandLine named = inlineCommand(span.line(), span.text());
                if (named != null) {
                    context = named;
                } else if (FLAG.matcher(span.text()).lookingAt()) {
                    checkBareFlag(span, paragraph.section(), context);
                }
            }
        }
    }

    /** Inline code that runs a blackpipe command (`blackpipe x ...`, or `fault add ...`): checked, and returned. */
    private CommandLine inlineCommand(int line, String text) {
        Matcher invocation = INVOCATION.matcher(text);
        if (invocation.find() && invocation.start() == 0) {
            CommandLine command = mention(line, invocation.group(1), "`" + text + "`");
            return command == root ? null : command; // `./blackpipe` alone names no command whose flags follow
        }
        String[] words = text.split("\\s+");
        CommandLine first = root.getSubcommands().get(words[0]);
        if (first == null || words.length < 2) {
            return null; // a word such as `reset` alone is as often the API's or a scenario step's
        }
        boolean asCommand = words[1].startsWith("-") || !first.getSubcommands().isEmpty();
        return asCommand ? mention(line, text, "`" + text + "`") : null;
    }

    private void checkBareFlag(Span span, String section, CommandLine context) {
        String flag = flags(span.text()).get(0);
        String where = "README.md:" + span.line() + ": `" + span.text() + "`: ";
        if (OTHER_PROGRAMS.contains(section)) {
            return;
        }
        if (context != null) {
            if (!has(context, flag)) {
                problems.add(where + flag + " is no option of `blackpipe " + path(context) + "`, the command its paragraph names");
            }
        } else if (section.equals(CONTROL_SECTION)) {
            for (CommandLine command : controlCommands()) {
                if (!has(command, flag)) {
                    problems.add(where + "the paragraph speaks of every control command, and `blackpipe " + path(command) + "` has no " + flag);
                }
            }
        } else if (SECTION_COMMAND.containsKey(section)) {
            CommandLine command = root.getSubcommands().get(SECTION_COMMAND.get(section));
            mentioned.add(command);
            if (!has(command, flag)) {
                problems.add(where + flag + " is no option of `blackpipe " + path(command) + "`, the command of section '" + section + "'");
            }
        } else {
            problems.add(where + flag + ": neither its paragraph nor its section '" + section + "' says which command it is a flag of");
        }
    }

    /**
     * The command {@code words} run (subcommands followed as far as they go), its flags each checked
     * against it; null, with the problem recorded, when a word is no command.
     */
    private CommandLine mention(int line, String words, String quoted) {
        String where = "README.md:" + line + ": " + quoted + ": ";
        CommandLine command = root;
        List<String> tokens = Arrays.stream(words.strip().split("\\s+")).filter(t -> !t.isEmpty()).toList();
        int index = 0;
        while (index < tokens.size() && !tokens.get(index).startsWith("-") && !command.getSubcommands().isEmpty()) {
            CommandLine sub = command.getSubcommands().get(tokens.get(index));
            if (sub == null) {
                problems.add(where + "`" + tokens.get(index) + "` is no command of `blackpipe" + (command == root ? "" : " " + path(command))
                        + "` (it has " + command.getSubcommands().keySet() + ")");
                return null;
            }
            command = sub;
            index++;
        }
        mentioned.add(command);
        for (String flag : flags(String.join(" ", tokens.subList(index, tokens.size())))) {
            if (!has(command, flag)) {
                problems.add(where + flag + " is no option of `blackpipe " + path(command) + "`");
            }
        }
        return command;
    }

    /** Whether {@code command} takes {@code flag}; when it does, that option counts as documented. */
    private boolean has(CommandLine command, String flag) {
        OptionSpec option = command.getCommandSpec().findOption(flag);
        if (option != null) {
            documented.add(option);
        }
        return option != null;
    }

    private static boolean isAncestor(CommandLine ancestor, CommandLine command) {
        for (CommandLine parent = command.getParent(); parent != null; parent = parent.getParent()) {
            if (parent == ancestor) {
                return true;
            }
        }
        return false;
    }

    private static List<String> flags(String text) {
        return FLAG.matcher(text).results().map(m -> m.group(1)).toList();
    }

    /**
     * The commands that drive a running proxy through its API (they take --admin); `health` is left out:
     * the README gives it apart, and /health needs no token.
     */
    private List<CommandLine> controlCommands() {
        return allCommands(root).stream()
                .filter(c -> c.getCommandSpec().findOption("--admin") != null && !c.getCommandName().equals("health")).toList();
    }

    static List<CommandLine> allCommands(CommandLine command) {
        List<CommandLine> all = new ArrayList<>();
        for (CommandLine sub : new LinkedHashSet<>(command.getSubcommands().values())) {
            all.add(sub);
            all.addAll(allCommands(sub));
        }
        return all;
    }

    private static String path(CommandLine command) {
        return command.getCommandSpec().qualifiedName(" ").replaceFirst("^blackpipe ?", "");
    }

    private static String description(CommandLine command) {
        String[] lines = command.getCommandSpec().usageMessage().description();
        return lines.length == 0 ? "no description" : lines[0];
    }
}
