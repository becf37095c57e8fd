package io.blackpipe.fault;

import io.blackpipe.observe.CommandNames;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A rule's command name that looks like a misspelt one blackpipe knows ("insret", "Insert"). failCommand takes any
 * name, and so does a rule (the server has commands blackpipe does not know), so such a rule is kept and never fires:
 * the CLI says so in a note rather than refusing it.
 */
public final class CommandSpelling {
    private CommandSpelling() {
    }

    /** A note for each name in the rule's {@code data.failCommands} that looks misspelt; none for a rule without them. */
    public static List<String> notes(BsonDocument rule) {
        List<String> notes = new ArrayList<>();
        BsonValue data = rule.get("data");
        if (data == null || !data.isDocument() || !data.asDocument().isArray("failCommands")) {
            return notes;
        }
        for (BsonValue name : data.asDocument().getArray("failCommands")) {
            if (name.isString()) {
                String likely = likelyMeant(name.asString().getValue());
                if (likely != null) {
                    notes.add("'" + name.asString().getValue() + "' is no command blackpipe knows: did you mean '" + likely
                            + "'? (kept as given, as failCommand keeps any name: the rule faults only a command of that name)");
                }
            }
        }
        return notes;
    }

    /**
     * The known name {@code name} is likely a misspelling of, or null: one that differs only in case, or by a letter or
     * two (one for a name of up to four letters) added, left out, changed or swapped with the next.
     */
    static String likelyMeant(String name) {
        if (name.isEmpty() || CommandNames.isKnown(name)) {
            return null;
        }
        String closest = null;
        int closestDistance = Integer.MAX_VALUE;
        for (String known : new TreeSet<>(CommandNames.known())) { // in one order: a tie names the same one each run
            if (known.toLowerCase(Locale.ROOT).equals(name.toLowerCase(Locale.ROOT))) {
                return known;
            }
            int distance = distance(name, known);
            if (distance < closestDistance) {
                closest = known;
                closestDistance = distance;
            }
        }
        return closestDistance <= (name.length() <= 4 ? 1 : 2) ? closest : null;
    }

    /** Edits from {@code a} to {@code b}: letters added, left out or changed, and two neighbours swapped (one edit). */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int changed = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + changed);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
