package io.blackpipe.observe;

import java.util.Map;
import java.util.Set;

/**
 * Keeps the command label bounded: known command names pass, under the name the server gives them
 * (findandmodify, the legacy shell's spelling, counts as findAndModify), anything else is "other".
 */
public final class CommandNames {
    /** The server's other names of known commands (Command::hasAlias); hello's names stay apart. */
    private static final Map<String, String> ALIASES = Map.of("findandmodify", "findAndModify", "deleteIndexes", "dropIndexes",
            "mapreduce", "mapReduce", "buildinfo", "buildInfo", "dbstats", "dbStats", "collstats", "collStats");
    private static final Set<String> KNOWN = Set.of(
            "insert", "update", "delete", "find", "getMore", "killCursors", "aggregate", "findAndModify",
            "count", "distinct", "bulkWrite", "commitTransaction", "abortTransaction", "endSessions",
            "create", "createIndexes", "drop", "dropDatabase", "dropIndexes", "listCollections",
            "listIndexes", "listDatabases", "collMod", "renameCollection", "ping", "buildInfo",
            "serverStatus", "hello", "isMaster", "ismaster", "saslStart", "saslContinue", "authenticate",
            "logout", "getnonce", "explain", "mapReduce", "replSetGetStatus", "replSetGetConfig", "replSetStepDown",
            "configureFailPoint", "waitForFailPoint", "startSession", "refreshSessions", "killSessions", "currentOp",
            "killOp", "dbStats", "collStats", "validate", "getLastError", "connectionStatus",
            "createSearchIndexes", "updateSearchIndex", "dropSearchIndex"); // the driver's Atlas Search index helpers

    private CommandNames() {
    }

    /** Whether blackpipe knows {@code commandName} by name, as one of the server's names of a command. */
    public static boolean isKnown(String commandName) {
        return KNOWN.contains(commandName) || ALIASES.containsKey(commandName);
    }

    /** The names blackpipe knows, each command's as the server gives it. */
    public static Set<String> known() {
        return KNOWN;
    }

    public static String label(String commandName) {
        String name = ALIASES.getOrDefault(commandName, commandName);
        return KNOWN.contains(name) ? name : "other";
    }
}
