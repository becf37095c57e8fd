package io.blackpipe.observe;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The values of the meters' {@code app} label. An app names itself (the handshake's appName), so a
 * client choosing a new name per connection would otherwise add meters to the registry, and lines
 * to every scrape, without end: the first {@link #MAX_APPS} names get a label of their own, the
 * later ones share {@link #OTHER}. The history keeps every app's own name: it is bounded anyway.
 */
final class AppLabels {
    /** Distinct app names labelled as themselves; the README's metrics section names this number. */
    static final int MAX_APPS = 100;
    /** The label of the apps beyond {@link #MAX_APPS}. */
    static final String OTHER = "other";

    private final Set<String> labelled = ConcurrentHashMap.newKeySet();
    private boolean full;

    /** {@code appName}'s label: itself while there is room (no appName, "", is always itself), else {@link #OTHER}. */
    String label(String appName) {
        if (appName.isEmpty() || labelled.contains(appName)) {
            return appName;
        }
        synchronized (this) {
            if (labelled.contains(appName) || labelled.size() < MAX_APPS) { // contains: another thread just added it
                labelled.add(appName);
                return appName;
            }
            if (!full) {
                full = true; // said once: every later app would repeat it
                System.getLogger("blackpipe").log(System.Logger.Level.WARNING, MAX_APPS + " distinct apps (appName) have"
                        + " their own metrics label: the commands of further apps are counted as app=\"" + OTHER
                        + "\" (the history keeps their names)");
            }
            return OTHER;
        }
    }
}
