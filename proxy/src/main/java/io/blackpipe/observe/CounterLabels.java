package io.blackpipe.observe;

import io.blackpipe.wire.CommandFacts;
import java.util.Arrays;
import java.util.List;

/**
 * The labels a reader of the counters names (BlackPipe, RemoteBlackPipe, `blackpipe expect`), checked:
 * a name the counters never carry would read 0 forever, and a check of "0 retries" would pass on a typo.
 */
public final class CounterLabels {
    private static final List<String> OUTCOMES = Arrays.stream(Outcome.values()).map(Outcome::label).toList();

    private CounterLabels() {
    }

    /** The command label {@code command} is counted under; a name counted as "other" is refused, as it would read 0. */
    public static String command(String command) {
        if (command == null || command.isEmpty()) {
            throw new IllegalArgumentException("command: required, e.g. \"insert\"");
        }
        if (CommandFacts.isHelloName(command) || ConnectionObserver.isAuthentication(command)) {
            // never an attempt, an outcome or a retry: counted apart, so attempts("hello") would read 0 forever
            throw new IllegalArgumentException("command: '" + command + "' is a handshake's or monitoring's command, counted"
                    + " apart from the application's: blackpipe_monitoring_commands_total on /metrics (its Micrometer name:"
                    + " blackpipe.monitoring.commands); a rule's faults on it are counted with the other faults");
        }
        return known(command);
    }

    /**
     * The command label a fault on {@code command} is counted under: an application's command, or a handshake's or
     * monitoring's (hello, saslStart, ...), whose faults are counted with the others.
     */
    public static String faultedCommand(String command) {
        if (command == null || command.isEmpty()) {
            throw new IllegalArgumentException("command: required, e.g. \"insert\"");
        }
        return known(command);
    }

    /** A name counted as "other" is refused, as it would read 0. */
    private static String known(String command) {
        String label = CommandNames.label(command);
        if (label.equals("other") && !command.equals("other")) {
            throw new IllegalArgumentException("command: '" + command + "' is not a command blackpipe counts by name"
                    + didYouMean(NameSpelling.likelyMeant(command, CommandNames.known()))
                    + " (command names are case-sensitive); it counts it, with every command it does not know, as \"other\"");
        }
        return label;
    }

    /** One of ok, error, network_error, no_reply. */
    public static String outcome(String outcome) {
        return oneOf("outcome", outcome, OUTCOMES);
    }

    /** {@code value} when {@code known} holds it, else an IllegalArgumentException naming {@code what} and the known ones. */
    public static String oneOf(String what, String value, List<String> known) {
        if (value == null || !known.contains(value)) { // List.of(...).contains(null) throws a NullPointerException
            throw new IllegalArgumentException(what + ": " + (value == null ? "required"
                    : "'" + value + "' is none of " + known + didYouMean(NameSpelling.likelyMeant(value, known))));
        }
        return value;
    }

    private static String didYouMean(String likely) {
        return likely == null ? "" : ": did you mean '" + likely + "'?";
    }
}
