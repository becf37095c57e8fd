package io.blackpipe.topology;

/**
 * Where a member refuses what every mongod takes, or answers otherwise, as jongodb does (HelloProbe
 * finds out at start), so the proxy sends it what it takes, or answers as mongod would, and the
 * driver sees what a mongod would do.
 *
 * @param primaryReadsOnly a command with a read preference other than primary is refused, hellos
 *                         too (the driver chose the member by it; a one-member set serves it at its
 *                         primary): its read preference is dropped on its way
 * @param refusesUnacknowledged a write concern of w:0 is refused (a fire-and-forget write, which
 *                              mongod applies unanswered): it goes as w:1, and the reply no client
 *                              asked for is dropped
 * @param lacksEndSessions there is no endSessions command, which drivers send as a client closes:
 *                         the proxy answers it ok: 1 in the member's place, as mongod answers
 * @param reappliesRetriedWrites a retryable write sent again with the same lsid and txnNumber runs
 *                               again, where mongod answers it from its first run: the proxy answers
 *                               such a retry with the member's reply to the first (RetriedWrites)
 * @param duplicateKeyAsCommandError a one-statement write that meets a duplicate key is answered
 *                                   ok: 0 with code 11000, where mongod answers ok: 1 with it in
 *                                   writeErrors: the proxy gives the client mongod's shape
 *                                   (DuplicateKeys)
 * @param commitRacesWrites a transaction's commit and a write beside it (outside a transaction, or another
 *                          commit) may lose one of them, as jongodb 0.1.6 does: the proxy sends a commit
 *                          alone (CommitsAlone). A race cannot be asked for at start: the member is known
 *                          by its name, a buildInfo version that says jongodb
 * @param transactionEndsRefuseReadPreference a commitTransaction or abortTransaction that carries a $readPreference, even
 *                                            primary, is refused (BadValue), as jongodb 0.1.6 refuses it, where mongod
 *                                            takes primary: PyMongo 3 sends it on every command of a transaction, so
 *                                            none of its transactions ended. The proxy drops it on their way
 * @param keepsSupersededTransactions a session's transaction stays open when the session goes on to a newer transaction
 *                                    number, and the newer transaction is refused (BadValue, "transaction already in
 *                                    progress for this session"), as jongodb 0.1.6 does, where mongod aborts the open
 *                                    one: a transaction whose commit never reached the member held its session so for
 *                                    good. The proxy sends the open one's abort first (SupersededTransactions)
 * @param legacyQueriesAsCommands a legacy OP_QUERY find (a namespace that is no $cmd) or OP_GET_MORE is answered as an unknown
 *                                command, its error a document like any other, and any command sent over OP_QUERY is run,
 *                                by a member whose wire version says 5.1 or later, where mongod 5.1+ refuses them
 *                                (QueryFailure, code 5739101; UnsupportedOpQueryCommand but for the handshake's): PyMongo
 *                                3's exhaust cursors and raw batches read jongodb 0.1.6's error as the one document found.
 *                                The proxy answers them as mongod does (LegacyOpcodes)
 */
public record MemberQuirks(boolean primaryReadsOnly, boolean refusesUnacknowledged, boolean lacksEndSessions,
                           boolean reappliesRetriedWrites, boolean duplicateKeyAsCommandError, boolean commitRacesWrites,
                           boolean transactionEndsRefuseReadPreference, boolean keepsSupersededTransactions,
                           boolean legacyQueriesAsCommands) {
    public static final MemberQuirks NONE = new MemberQuirks(false, false, false, false, false, false, false, false, false);

    public boolean any() {
        return primaryReadsOnly || refusesUnacknowledged || lacksEndSessions || reappliesRetriedWrites
                || duplicateKeyAsCommandError || commitRacesWrites || transactionEndsRefuseReadPreference || keepsSupersededTransactions
                || legacyQueriesAsCommands;
    }

    /** What these and {@code other} found, each quirk either found (two partial answers of one member). */
    public MemberQuirks or(MemberQuirks other) {
        return new MemberQuirks(primaryReadsOnly || other.primaryReadsOnly, refusesUnacknowledged || other.refusesUnacknowledged,
                lacksEndSessions || other.lacksEndSessions, reappliesRetriedWrites || other.reappliesRetriedWrites,
                duplicateKeyAsCommandError || other.duplicateKeyAsCommandError, commitRacesWrites || other.commitRacesWrites,
                transactionEndsRefuseReadPreference || other.transactionEndsRefuseReadPreference,
                keepsSupersededTransactions || other.keepsSupersededTransactions, legacyQueriesAsCommands || other.legacyQueriesAsCommands);
    }

    /** Whether a request may be sent otherwise than it came: a read preference or a w:0 it refuses. */
    public boolean rewritesRequests() {
        return primaryReadsOnly || refusesUnacknowledged || transactionEndsRefuseReadPreference;
    }

    /** These quirks as the simulated members over such a node have them: they pass it no read preference at all. */
    public MemberQuirks asSimulatedMembers() {
        return new MemberQuirks(true, refusesUnacknowledged, lacksEndSessions, reappliesRetriedWrites, duplicateKeyAsCommandError,
                commitRacesWrites, transactionEndsRefuseReadPreference, keepsSupersededTransactions, legacyQueriesAsCommands);
    }
}
