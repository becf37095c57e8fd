package io.blackpipe.fault;

import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A scenario that cannot be loaded: the message reads "source:line: field: what is wrong", a line for each error found
 * (by line; at most {@link #MAX_SHOWN}, then how many more), so one reading of a file shows what to mend in it.
 */
public final class ScenarioException extends RuntimeException {
    /** The errors one message lists: a file of a thousand bad rules is mended from the first ones. */
    static final int MAX_SHOWN = 20;

    private final transient int line;

    public ScenarioException(String source, int line, String field, String message) {
        super(source + ":" + line + ": " + field + ": " + message);
        this.line = line;
    }

    private ScenarioException(String message, int line) {
        super(message);
        this.line = line;
    }

    /** The one exception that lists {@code errors} (one or more, of one {@code source}), by line, file order within a line. */
    static ScenarioException all(String source, List<ScenarioException> errors) {
        if (errors.size() == 1) {
            return errors.get(0);
        }
        List<ScenarioException> sorted = errors.stream().sorted(Comparator.comparingInt(e -> e.line)).toList();
        String shown = sorted.stream().limit(MAX_SHOWN).map(ScenarioException::getMessage).collect(Collectors.joining("\n"));
        int more = sorted.size() - MAX_SHOWN;
        return new ScenarioException(shown + (more > 0 ? "\n" + source + ": " + Plural.of(more, "more error") + " not shown" : ""),
                sorted.get(0).line);
    }
}
