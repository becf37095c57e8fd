package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.blackpipe.observe.CommandNames;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class CommandSpellingTest {

    @Test
    void aNameALetterOrTwoFromAKnownOneIsNotedWithIt() {
        assertEquals("insert", CommandSpelling.likelyMeant("insret"), "two letters swapped");
        assertEquals("insert", CommandSpelling.likelyMeant("Insert"), "names are case-sensitive");
        assertEquals("findAndModify", CommandSpelling.likelyMeant("findandModify"));
        assertEquals("aggregate", CommandSpelling.likelyMeant("agregate"), "a letter left out");
        assertEquals("update", CommandSpelling.likelyMeant("updates"), "a letter added");
        assertEquals("find", CommandSpelling.likelyMeant("fnd"));
        assertNull(CommandSpelling.likelyMeant("fd"), "two edits from a four-letter name: too far to guess");
    }

    @Test
    void theKnownNamesAndTheServersOtherCommandsAreNotNoted() {
        for (String known : CommandNames.known()) {
            assertNull(CommandSpelling.likelyMeant(known), known);
        }
        for (String alias : List.of("findandmodify", "deleteIndexes", "mapreduce", "buildinfo", "dbstats", "collstats")) {
            assertNull(CommandSpelling.likelyMeant(alias), alias);
        }
        // commands blackpipe does not count by name, which a rule may fault all the same
        for (String other : List.of("getLog", "hostInfo", "whatsmyuri", "getParameter", "setParameter", "listSearchIndexes", "dbHash",
                "profile", "compact", "reIndex", "shutdown", "fsync", "dataSize", "connPoolStats", "top", "lockInfo", "usersInfo",
                "rolesInfo", "createUser", "dropUser", "updateUser", "createRole", "dropRole", "grantRolesToUser", "killAllSessions",
                "listCommands", "getCmdLineOpts", "getDefaultRWConcern", "setDefaultRWConcern", "replSetFreeze", "replSetReconfig",
                "replSetInitiate", "replSetMaintenance", "replSetSyncFrom", "appendOplogNote", "convertToCapped", "filemd5",
                "planCacheClear", "analyze", "analyzeShardKey", "balancerStatus", "shardCollection", "enableSharding", "movePrimary",
                "addShard", "removeShard", "listShards", "flushRouterConfig", "cleanupOrphaned", "split", "mergeChunks", "moveChunk",
                "logRotate", "setFeatureCompatibilityVersion", "dropConnections", "features", "reshardCollection", "getClusterParameter",
                "setClusterParameter", "cloneCollectionAsCapped", "collMod", "createView", "validateDBMetadata", "clearLog",
                "getShardMap", "isdbgrid", "netstat", "hello", "isMaster", "ismaster")) {
            assertNull(CommandSpelling.likelyMeant(other), other);
        }
    }

    @Test
    void notesNameEachMisspeltCommandOfARule() {
        assertEquals(List.of("'insret' is no command blackpipe knows: did you mean 'insert'? (kept as given, as failCommand keeps"
                        + " any name: the rule faults only a command of that name)"),
                CommandSpelling.notes(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                        + " data: {failCommands: ['find', 'insret', 7], closeConnection: true}}")));
        assertEquals(List.of(), CommandSpelling.notes(BsonDocument.parse("{mode: 'alwaysOn', data: {failAllCommands: true}}")));
        assertEquals(List.of(), CommandSpelling.notes(BsonDocument.parse("{mode: 'alwaysOn', data: 3}")));
    }
}
