package io.blackpipe.fault;

import io.blackpipe.observe.Attempt;
import io.blackpipe.topology.MemberState;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.OpCode;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.types.ObjectId;

/**
 * An {@link Interception} that records what a fault did with the command instead of doing it:
 * the terminal calls in order, the reply it answered with, the fate it forwarded with, the waits
 * it asked for and the topologyVersions it asked for. A wait is not run until {@link #elapse()}.
 */
public final class FakeInterception implements Interception {
    public static final ObjectId PROCESS_ID = new ObjectId("65f0c0ffee0000000000abcd");

    private final CommandFacts facts;
    private final MemberState member;
    /** Terminal calls in order: "forward", "forward(fate)", "answer", "close", "reset", "hang". */
    public final List<String> calls = new ArrayList<>();
    /** The newer flag of each topologyVersion() request. */
    public final List<Boolean> topologyVersionRequests = new ArrayList<>();
    public BsonDocument answered;
    public ReplyFate fate;
    public final List<Long> waits = new ArrayList<>();
    private final List<Runnable> pending = new ArrayList<>();

    public FakeInterception(CommandFacts facts, MemberState member) {
        this.facts = facts;
        this.member = member;
    }

    /** An insert on a 6.0 (wire 17) primary, as a retryable write (lsid + txnNumber). */
    public static FakeInterception retryableInsert() {
        return new FakeInterception(Facts.insert().txnNumber(1).build(), primary(17));
    }

    public static MemberState primary(int maxWireVersion) {
        return new MemberState(MemberState.Role.PRIMARY, maxWireVersion, PROCESS_ID, 7);
    }

    @Override
    public CommandFacts facts() {
        return facts;
    }

    @Override
    public MemberState memberState() {
        return member;
    }

    /** Whether the fake's client said helloOk: true, as every driver since 2021 does in its handshake. */
    public boolean clientSaidHelloOk = true;

    @Override
    public boolean clientSaidHelloOk() {
        return clientSaidHelloOk;
    }

    /** The announcement delay of each topologyVersion() request. */
    public final List<Long> announcementDelays = new ArrayList<>();

    @Override
    public BsonDocument topologyVersion(boolean newer, long announceAfterMillis) {
        topologyVersionRequests.add(newer);
        announcementDelays.add(announceAfterMillis);
        if (!member.hasTopologyVersion()) {
            return null;
        }
        return new BsonDocument("processId", new BsonObjectId(member.processId()))
                .append("counter", new BsonInt64(member.topologyCounter() + (newer ? 1 : 0)));
    }

    /** The fake's command is a change stream's (its aggregate, or a getMore of its cursor). */
    public boolean changeStream;

    @Override
    public boolean onChangeStream() {
        return changeStream || facts.changeStream();
    }

    @Override
    public void forward() {
        calls.add("forward");
    }

    @Override
    public void forward(ReplyFate fate) {
        calls.add("forward(fate)");
        this.fate = fate;
    }

    @Override
    public void answer(BsonDocument reply) {
        calls.add("answer");
        answered = reply;
    }

    @Override
    public void close() {
        calls.add("close");
    }

    @Override
    public void reset() {
        calls.add("reset");
    }

    @Override
    public void hang() {
        calls.add("hang");
    }

    @Override
    public void after(long millis, Runnable then) {
        waits.add(millis);
        pending.add(then);
    }

    @Override
    public void blockThenForward(long millis) {
        after(millis, this::forward);
    }

    /** Lets every wait asked for so far run out. */
    public void elapse() {
        List<Runnable> due = new ArrayList<>(pending);
        pending.clear();
        due.forEach(Runnable::run);
    }

    /** A recording {@link ReplyFate.Reply}: which terminal call the fate made, and with what. */
    public static final class FakeReply implements ReplyFate.Reply {
        private final BsonDocument body;
        public final List<String> calls = new ArrayList<>();
        public long passedAfter = -1;
        /** What passInPieces was given: bytes per piece, interval in ms. */
        public long[] pieces;
        public BsonDocument replacement;
        /** What truncateAndClose was given: the bytes the client gets; -1 when it was not called. */
        public int truncatedAt = -1;

        public FakeReply(BsonDocument body) {
            this.body = body;
        }

        @Override
        public BsonDocument body() {
            return body;
        }

        @Override
        public void pass() {
            calls.add("pass");
        }

        @Override
        public void passAfter(long millis) {
            calls.add("passAfter");
            passedAfter = millis;
        }

        @Override
        public void passInPieces(int bytesPerPiece, long intervalMillis) {
            calls.add("passInPieces");
            pieces = new long[] {bytesPerPiece, intervalMillis};
        }

        @Override
        public void replace(BsonDocument body) {
            calls.add("replace");
            replacement = body;
        }

        @Override
        public void dropAndReset() {
            calls.add("dropAndReset");
        }

        @Override
        public void truncateAndClose(int bytes) {
            calls.add("truncateAndClose");
            truncatedAt = bytes;
        }
    }

    /** Builds {@link CommandFacts} and {@link Attempt}s for unit tests. */
    public static final class Facts {
        private String name;
        private String database = "app";
        private String collection = "orders";
        private UUID lsid = UUID.fromString("00000000-0000-4000-8000-000000000001");
        private long txnNumber = -1;
        private boolean inTransaction;

        private Facts(String name) {
            this.name = name;
        }

        public static Facts command(String name) {
            return new Facts(name);
        }

        public static Facts insert() {
            return new Facts("insert");
        }

        public Facts database(String database) {
            this.database = database;
            return this;
        }

        public Facts collection(String collection) {
            this.collection = collection;
            return this;
        }

        public Facts txnNumber(long txnNumber) {
            this.txnNumber = txnNumber;
            return this;
        }

        public Facts noSession() {
            this.lsid = null;
            return this;
        }

        public Facts inTransaction() {
            this.inTransaction = true;
            if (txnNumber < 0) {
                txnNumber = 1;
            }
            return this;
        }

        public CommandFacts build() {
            return new CommandFacts(42, OpCode.OP_MSG, name, database, collection, 0, lsid, txnNumber, inTransaction,
                    "", false, false, null, 0);
        }

        public Attempt attempt(String appName, int attemptNumber) {
            return new Attempt(build(), "db1.example:27017", appName, 1, attemptNumber, System.nanoTime(), 0, null);
        }
    }
}
