package io.blackpipe.observe;

import java.util.Collection;
import java.util.Locale;
import java.util.TreeSet;

/** Which known name a misspelt one ("insret", "Insert") likely means, for the errors and notes that say "did you mean". */
public final class NameSpelling {
    private NameSpelling() {
    }

    /**
     * The name of {@code names} that {@code name} is likely a misspelling of, or null: one that differs only in case, or by
     * a letter or two (one for a name of up to four letters) added, left out, changed or swapped with the next. Two names
     * as near (db9:27017 to db1:27017 and db2:27017) are no guess: null, rather than the first of them.
     */
    public static String likelyMeant(String name, Collection<String> names) {
        if (name == null || name.isEmpty() || names.contains(name)) {
            return null;
        }
        String closest = null;
        int closestDistance = Integer.MAX_VALUE;
        boolean tied = false;
        for (String known : new TreeSet<>(names)) {
            if (known.toLowerCase(Locale.ROOT).equals(name.toLowerCase(Locale.ROOT))) {
                return known;
            }
            int distance = distance(name, known);
            if (distance < closestDistance) {
                closest = known;
                closestDistance = distance;
                tied = false;
            } else if (distance == closestDistance && !known.equalsIgnoreCase(closest)) { // aliases by case are one name
                tied = true;
            }
        }
        return !tied && closestDistance <= (name.length() <= 4 ? 1 : 2) ? closest : null;
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
