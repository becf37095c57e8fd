package io.blackpipe.fault;

/** "1 rule", "2 rules": counts in messages, so none reads "1 rules" or "rule(s)". */
public final class Plural {
    private Plural() {
    }

    /** {@code count} and {@code noun}, with an "s" unless the count is 1. */
    public static String of(long count, String noun) {
        return count + " " + noun + (count == 1 ? "" : "s");
    }
}
