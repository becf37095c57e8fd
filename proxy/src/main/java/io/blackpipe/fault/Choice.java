package io.blackpipe.fault;

import java.util.Arrays;
import java.util.Locale;

/** A fault's word among a few (a direction, what follows an idle timeout), read as users write it: case aside. */
final class Choice {
    private Choice() {
    }

    /**
     * The constant of {@code type} named {@code written}, case and surrounding spaces aside.
     *
     * @throws IllegalArgumentException naming {@code field}, every choice (alphabetically) and what was written
     */
    static <E extends Enum<E>> E of(Class<E> type, String field, String written) {
        E[] choices = type.getEnumConstants();
        if (written != null) {
            for (E choice : choices) {
                if (choice.name().equalsIgnoreCase(written.strip())) {
                    return choice;
                }
            }
        }
        String[] names = Arrays.stream(choices).map(choice -> choice.name().toLowerCase(Locale.ROOT)).sorted().toArray(String[]::new);
        String listed = String.join(", ", Arrays.copyOf(names, names.length - 1)) + " or " + names[names.length - 1];
        throw new IllegalArgumentException(field + ": must be " + listed + ", got '" + written + "'");
    }
}
