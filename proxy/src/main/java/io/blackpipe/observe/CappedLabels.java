package io.blackpipe.observe;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The values of a meter label that clients name: an app's (the handshake's appName) or a namespace's. A client choosing
 * a new name each time would otherwise add meters to the registry, and lines to every scrape, without end: the first
 * names (up to the cap) get a label of their own, the later ones share {@link #OTHER}, for as long as the proxy runs
 * (a meter's counts only grow). The history keeps every name: it is bounded anyway.
 */
public final class CappedLabels {
    /** Distinct app names labelled as themselves; the README's metrics section names this number. */
    static final int MAX_APPS = 100;
    /** Distinct namespaces a rollback's meter labels as themselves. */
    static final int MAX_NAMESPACES = 100;
    /** The longest app label, in chars: mongod refuses an appName over 128 bytes, and a raw client's 200 KB one made every scrape that much larger. */
    static final int MAX_APP_LENGTH = 128;
    /** The label of the names beyond the cap. */
    static final String OTHER = "other";

    private final int max;
    private final int maxLength;
    /** Said once, as the cap is reached: every later name would repeat it. */
    private final String saidAtTheCap;
    private final Set<String> labelled = ConcurrentHashMap.newKeySet();
    private boolean full;

    private CappedLabels(int max, int maxLength, String saidAtTheCap) {
        this.max = max;
        this.maxLength = maxLength;
        this.saidAtTheCap = saidAtTheCap;
    }

    /** The {@code app} label of the command meters. */
    static CappedLabels apps() {
        return new CappedLabels(MAX_APPS, MAX_APP_LENGTH, MAX_APPS + " distinct apps (appName) have their own metrics label: the commands of"
                + " further apps are counted as app=\"" + OTHER + "\" (the history keeps their names)");
    }

    /** The {@code namespace} label of {@code blackpipe_rolled_back_documents_total}. */
    public static CappedLabels namespaces() {
        return new CappedLabels(MAX_NAMESPACES, Integer.MAX_VALUE, MAX_NAMESPACES + " distinct namespaces have their own rolled back documents"
                + " label: those of further namespaces are counted as namespace=\"" + OTHER + "\" (the log names them)");
    }

    /**
     * {@code name}'s label: itself (an app's first {@link #MAX_APP_LENGTH} chars) while there is room ("", no appName, is always
     * itself), else {@link #OTHER}.
     */
    public String label(String name) {
        if (name.length() > maxLength) {
            name = name.substring(0, Character.isHighSurrogate(name.charAt(maxLength - 1)) ? maxLength - 1 : maxLength);
        }
        if (name.isEmpty() || labelled.contains(name)) {
            return name;
        }
        synchronized (this) {
            if (labelled.contains(name) || labelled.size() < max) { // contains: another thread just added it
                labelled.add(name);
                return name;
            }
            if (!full) {
                full = true;
                System.getLogger("blackpipe").log(System.Logger.Level.WARNING, saidAtTheCap);
            }
            return OTHER;
        }
    }
}
