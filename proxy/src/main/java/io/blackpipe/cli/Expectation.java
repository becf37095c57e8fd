package io.blackpipe.cli;

import io.blackpipe.admin.StatsJson;
import io.blackpipe.fault.FaultLabels;
import io.blackpipe.observe.CounterLabels;
import io.blackpipe.wire.CommandFacts;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonDocument;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * One count `blackpipe expect` checks: which counter, of what ({@code subject}, and for outcomes and
 * faults a {@code detail}), and the value it should have: exactly, at least or at most {@code expected}.
 */
record Expectation(Counter counter, String subject, String detail, String comparison, long expected) {
    private static final Pattern FORM = Pattern.compile("([^=<>]+)(==|=|>=|<=)\\s*(\\d{1,18})");

    /** The counters of GET /api/v1/stats, each with the form its option takes. */
    enum Counter {
        ATTEMPTS("COMMAND=N", "insert=2", 1, 0),
        RETRIES("COMMAND=N", "insert=1", 1, 0),
        OUTCOMES("COMMAND:OUTCOME=N", "insert:network_error=1", 2, 0),
        FAULTS("FAULT[:COMMAND]=N", "resetConnection:insert=1", 1, 1);

        final String form;
        final String example;
        /** The names before the comparison, ':' between them: those it needs, and those it may add. */
        final int names;
        final int optionalNames;

        Counter(String form, String example, int names, int optionalNames) {
            this.form = form;
            this.example = example;
            this.names = names;
            this.optionalNames = optionalNames;
        }
    }

    /** What the proxy counted since {@code baseline} (the stats of an earlier moment, or none), summed over members and apps. */
    long counted(BsonDocument stats, BsonDocument baseline) {
        return counted(stats) - counted(baseline);
    }

    /** A baseline file this counts more in than the proxy's {@code stats} do is no earlier moment of that proxy. */
    void checkBelow(BsonDocument stats, BsonDocument baseline, Path file) throws AdminClient.Failure {
        long now = counted(stats);
        long then = counted(baseline);
        if (now < then) {
            throw StatsBaseline.countedLessThan(file, what(), now, then);
        }
    }

    /** What the proxy counted, summed over members and apps. */
    private long counted(BsonDocument stats) {
        return switch (counter) {
            case ATTEMPTS -> StatsJson.sum(stats, "commands", "attempts", "command", subject);
            case RETRIES -> StatsJson.sum(stats, "commands", "retries", "command", subject);
            case OUTCOMES -> StatsJson.sum(stats, "outcomes", detail, "command", subject);
            case FAULTS -> detail == null ? StatsJson.sum(stats, "faults", "count", "fault", subject)
                    : commandNames(detail).stream()
                            .mapToLong(name -> StatsJson.sum(stats, "faults", "count", "fault", subject, "command", name)).sum();
        };
    }

    /** A fault on hello counts under the name the driver sent, isMaster on a first handshake: hello is any of them, as in a rule. */
    private static List<String> commandNames(String command) {
        return CommandFacts.isHelloName(command) ? List.of("hello", "isMaster", "ismaster") : List.of(command);
    }

    boolean holds(long counted) {
        return switch (comparison) {
            case ">=" -> counted >= expected;
            case "<=" -> counted <= expected;
            default -> counted == expected;
        };
    }

    /** As the option takes it: "retries insert=1", "faults resetConnection:insert>=1". */
    @Override
    public String toString() {
        return what() + comparison + expected;
    }

    /** What it counts: "retries insert", "faults resetConnection:insert". */
    private String what() {
        return counter.name().toLowerCase(Locale.ROOT) + " " + subject + (detail == null ? "" : ":" + detail);
    }

    /** Reads an option's value; every name is checked, as a misspelt one would be counted 0 forever. */
    static Expectation parse(Counter counter, String text) {
        Matcher form = FORM.matcher(text.strip());
        String[] names = form.matches() ? form.group(1).strip().split(":", -1) : new String[0];
        if (names.length < counter.names || names.length > counter.names + counter.optionalNames) {
            throw new TypeConversionException("'" + text + "' is not " + counter.form + " such as " + counter.example
                    + " (N a whole number, after =, >= or <=)");
        }
        String comparison = form.group(2).equals("==") ? "=" : form.group(2);
        long expected = Long.parseLong(form.group(3));
        try {
            return switch (counter) {
                case ATTEMPTS, RETRIES -> new Expectation(counter, CounterLabels.command(names[0]), null, comparison, expected);
                case OUTCOMES -> new Expectation(counter, CounterLabels.command(names[0]), CounterLabels.outcome(names[1]),
                        comparison, expected);
                case FAULTS -> new Expectation(counter, FaultLabels.check(names[0]),
                        names.length == 2 ? CounterLabels.faultedCommand(names[1]) : null, comparison, expected);
            };
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException("'" + text + "': " + e.getMessage());
        }
    }

    static final class Attempts implements ITypeConverter<Expectation> {
        @Override
        public Expectation convert(String value) {
            return parse(Counter.ATTEMPTS, value);
        }
    }

    static final class Retries implements ITypeConverter<Expectation> {
        @Override
        public Expectation convert(String value) {
            return parse(Counter.RETRIES, value);
        }
    }

    static final class Outcomes implements ITypeConverter<Expectation> {
        @Override
        public Expectation convert(String value) {
            return parse(Counter.OUTCOMES, value);
        }
    }

    static final class Faults implements ITypeConverter<Expectation> {
        @Override
        public Expectation convert(String value) {
            return parse(Counter.FAULTS, value);
        }
    }
}
