package io.blackpipe.pipe;

import io.blackpipe.topology.MemberQuirks;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What a member does otherwise than mongod (jongodb), and what blackpipe does about it, told in the log: each
 * difference of a member in full once per process, then by count, so that a test suite that starts a proxy per class
 * in front of one upstream reads them once, not ten lines a class.
 */
final class QuirkNotes {
    /** The differences told in full in this process, each as "process difference" (see {@link #process}). */
    private static final Set<String> TOLD = ConcurrentHashMap.newKeySet();

    private record Note(String difference, String text) {
    }

    private QuirkNotes() {
    }

    /**
     * The server process at {@code address}, by the processId its {@code hello} reports where it reports one: a server
     * started later on a port an earlier one had is another, whose differences are told in full again.
     */
    static String process(String address, BsonDocument hello) {
        BsonValue topologyVersion = hello == null ? null : hello.get("topologyVersion");
        return topologyVersion != null && topologyVersion.isDocument() && topologyVersion.asDocument().containsKey("processId")
                ? address + " " + topologyVersion.asDocument().get("processId") : address;
    }

    /** Tells {@code quirks} of the server {@code process} names, called {@code who} ("member db:27017", "the real node"). */
    static void log(ProxyLog log, String who, String process, MemberQuirks quirks) {
        List<String> toldBefore = new ArrayList<>();
        for (Note note : notes(quirks)) {
            if (TOLD.add(process + " " + note.difference())) {
                log.info(who + note.text());
            } else {
                toldBefore.add(note.difference());
            }
        }
        if (!toldBefore.isEmpty()) {
            log.info(who + " differs from mongod in " + (toldBefore.size() == 1 ? "one way" : toldBefore.size() + " ways") + " told"
                    + " earlier in this process (" + String.join(", ", toldBefore) + "), and blackpipe works around "
                    + (toldBefore.size() == 1 ? "it" : "them") + " alike");
        }
    }

    private static List<Note> notes(MemberQuirks quirks) {
        List<Note> notes = new ArrayList<>();
        note(notes, quirks.primaryReadsOnly(), "primaryReadsOnly",
                " refuses a read preference other than primary, as jongodb does: blackpipe drops them on their way"
                        + " there, as a one-member set serves such reads and hellos at its primary");
        note(notes, quirks.refusesUnacknowledged(), "refusesUnacknowledged",
                " refuses w:0 writes, as jongodb does: blackpipe sends them with w:1 and drops the reply no client"
                        + " asked for, so that they land unanswered as on mongod");
        note(notes, quirks.lacksEndSessions(), "lacksEndSessions",
                " has no endSessions command, as jongodb has none: blackpipe answers it ok: 1 in its place, as"
                        + " mongod does, so that a client's close is no error");
        note(notes, quirks.reappliesRetriedWrites(), "reappliesRetriedWrites",
                " runs a retried write again, as jongodb does: blackpipe answers a retry (the same lsid and"
                        + " txnNumber) with the member's reply to its first run, as mongod does, so that a write whose reply was"
                        + " lost is applied once");
        note(notes, quirks.duplicateKeyAsCommandError(), "duplicateKeyAsCommandError",
                " answers a write's duplicate key as the command's error (ok: 0), as jongodb does: blackpipe"
                        + " gives a one-statement write's client mongod's ok: 1 with the error in writeErrors, and inserts again a"
                        + " batch insert that met one, as mongod would have applied it");
        note(notes, quirks.commitRacesWrites(), "commitRacesWrites",
                " is jongodb, whose transaction commit loses a write that lands beside it (another commit, or"
                        + " one outside a transaction): blackpipe sends each commitTransaction alone, after the writes at the"
                        + " member were answered and before those sent meanwhile, as mongod loses neither; and gives the"
                        + " WriteConflict jongodb finds at a commit the TransientTransactionError label mongod gives it, so that"
                        + " withTransaction runs the transaction again");
        note(notes, quirks.transactionEndsRefuseReadPreference(), "transactionEndsRefuseReadPreference",
                " refuses a commitTransaction or abortTransaction that carries a read preference, even primary,"
                        + " as jongodb does: blackpipe drops it on their way there (PyMongo sends one), as mongod takes it");
        note(notes, quirks.keepsSupersededTransactions(), "keepsSupersededTransactions",
                " keeps a session's transaction open when the session starts a newer one, and refuses the newer one,"
                        + " as jongodb does: blackpipe aborts the open one first, as mongod aborts it, so that a transaction whose"
                        + " commit never arrived does not hold its session");
        note(notes, quirks.legacyQueriesAsCommands(), "legacyQueriesAsCommands",
                " answers a legacy OP_QUERY find or OP_GET_MORE as an unknown command, its error as the one document"
                        + " found, and runs any command sent over OP_QUERY, as jongodb does: blackpipe refuses them as mongod 5.1+ does"
                        + " (QueryFailure, code 5739101; UnsupportedOpQueryCommand for a command but the handshake's), so that PyMongo"
                        + " 3's exhaust cursors and raw batches, and drivers too old for mongod 5.1, fail as they would there");
        return notes;
    }

    private static void note(List<Note> notes, boolean holds, String difference, String text) {
        if (holds) {
            notes.add(new Note(difference, text));
        }
    }
}
