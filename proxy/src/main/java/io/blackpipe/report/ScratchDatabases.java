package io.blackpipe.report;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import org.bson.types.ObjectId;

/**
 * The throw-away databases one run of the report (or of --spec) writes to on the upstream, one per
 * cell or case: fresh, as some upstreams cannot empty a collection, and named by an ObjectId so no
 * run meets an earlier run's counter on a long-lived deployment.
 */
final class ScratchDatabases {
    private final String prefix;

    /** @param kind "report" or "spec" */
    ScratchDatabases(String kind) {
        prefix = "blackpipe_" + kind + "_" + new ObjectId().toHexString() + "_";
    }

    /** The database of cell or case number {@code index}. */
    String name(int index) {
        return prefix + index;
    }

    /**
     * Drops a database once its cell or case is judged, so runs do not pile up databases on the
     * user's deployment. Best effort: jongodb has no dropDatabase, a user may lack the privilege,
     * and a name is never used twice anyway.
     */
    static void dropQuietly(MongoClient direct, String database) {
        try {
            direct.getDatabase(database).drop();
        } catch (MongoException e) {
            // left behind: harmless to later runs
        }
    }
}
