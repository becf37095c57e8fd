package io.blackpipe.fault;

import io.blackpipe.observe.Attempt;
import io.blackpipe.topology.MemberState;
import java.util.Set;
import java.util.function.Supplier;
import org.bson.BsonDocument;

/**
 * Which commands a rule applies to: failCommand's failCommands (or failAllCommands), appName and
 * namespace, plus blackpipe's member ("primary", "secondary" or host:port) and attempt ("first" or
 * "retry") and commandMatches (fields the command holds). Null fields match everything; null
 * {@code commands} is every command but those in {@code allBut}.
 */
public record Matcher(Set<String> commands, Set<String> allBut, String appName, String namespace, String member,
                      String attempt, CommandPattern pattern) {
    /** No command to look into: a pattern then matches nothing. */
    private static final Supplier<BsonDocument> NO_COMMAND = () -> null;

    /** A rule on the named commands. */
    public Matcher(Set<String> commands, String appName, String namespace, String member, String attempt) {
        this(commands, Set.of(), appName, namespace, member, attempt, null);
    }

    /** A rule on the named commands whose documents hold what {@code pattern} says. */
    public Matcher(Set<String> commands, String appName, String namespace, String member, String attempt, CommandPattern pattern) {
        this(commands, Set.of(), appName, namespace, member, attempt, pattern);
    }

    /** A rule on every command (failAllCommands) but those in {@code allBut}. */
    public static Matcher allCommandsBut(Set<String> allBut, String appName, String namespace, String member, String attempt,
                                         CommandPattern pattern) {
        return new Matcher(null, allBut, appName, namespace, member, attempt, pattern);
    }

    public boolean allCommands() {
        return commands == null;
    }

    public boolean matches(Attempt attempt, MemberState state, String advertisedMember) {
        return matches(attempt, state, advertisedMember, NO_COMMAND);
    }

    /**
     * @param command the command's document, asked for only if this rule looks into it; null when there is none to
     *                read (its BSON does not decode): a pattern matches no such command, which goes on as without the rule
     */
    public boolean matches(Attempt attempt, MemberState state, String advertisedMember, Supplier<BsonDocument> command) {
        if (commands == null ? allBut.contains(attempt.command()) : !commands.contains(attempt.command())) {
            return false;
        }
        if (appName != null && !appName.equals(attempt.appName())) {
            return false;
        }
        if (namespace != null && !namespaceMatches(attempt)) {
            return false;
        }
        if (member != null && !memberMatches(attempt.member(), advertisedMember, state)) {
            return false;
        }
        if (this.attempt != null && this.attempt.equals("retry") != attempt.isRetry()) {
            return false;
        }
        if (pattern == null) {
            return true;
        }
        BsonDocument document = command.get(); // last: the one that decodes the command
        return document != null && pattern.matches(document);
    }

    private boolean namespaceMatches(Attempt attempt) {
        String database = attempt.facts().namespaceDatabase();
        String collection = attempt.facts().namespaceCollection();
        if (namespace.indexOf('.') < 0) {
            return namespace.equals(database);
        }
        return namespace.length() == database.length() + 1 + collection.length()
                && namespace.startsWith(database) && namespace.charAt(database.length()) == '.'
                && namespace.endsWith(collection);
    }

    private boolean memberMatches(String upstream, String advertised, MemberState state) {
        switch (member) {
            case "primary": return state.role() == MemberState.Role.PRIMARY;
            case "secondary": return state.role() == MemberState.Role.SECONDARY;
            default: return member.equalsIgnoreCase(upstream) || member.equalsIgnoreCase(advertised);
        }
    }
}
