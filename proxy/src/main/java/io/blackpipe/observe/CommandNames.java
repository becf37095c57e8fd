package io.blackpipe.observe;

import java.util.Set;

/** Keeps the command label bounded: known command names pass, anything else is "other". */
public final class CommandNames {
    private static final Set<String> KNOWN = Set.of(
            "insert", "update", "delete", "find", "getMore", "killCursors", "aggregate", "findAndModify",
            "count", "distinct", "bulkWrite", "commitTransaction", "abortTransaction", "endSessions",
            "create", "createIndexes", "drop", "dropDatabase", "dropIndexes", "listCollections",
            "listIndexes", "listDatabases", "collMod", "renameCollection", "ping", "buildInfo",
            "serverStatus", "hello", "isMaster", "ismaster", "saslStart", "saslContinue", "authenticate",
            "logout", "getnonce", "explain", "mapReduce", "replSetGetStatus", "replSetStepDown",
            "configureFailPoint", "startSession", "refreshSessions", "killSessions", "currentOp",
            "killOp", "dbStats", "collStats", "validate", "getLastError", "connectionStatus");

    private CommandNames() {
    }

    public static String label(String commandName) {
        return KNOWN.contains(commandName) ? commandName : "other";
    }
}
