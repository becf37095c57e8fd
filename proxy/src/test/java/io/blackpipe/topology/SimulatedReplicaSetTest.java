package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.OpCode;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonValue;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The replies that describe the set, as each simulated member of a set over one real node gives them. */
class SimulatedReplicaSetTest {
    private static final MemberAddress REAL = MemberAddress.parse("db.internal:27017");
    private final List<MemberAddress> names = SimulatedReplicaSet.names(REAL, 3);
    private SimulatedReplicaSet set;

    @BeforeEach
    void setUp() {
        MemberMap addresses = new MemberMap("proxy.local", 40000, Map.of(), (upstream, port) -> port);
        names.forEach(addresses::ensure);
        set = new SimulatedReplicaSet("rs0", names, addresses, new MemberStates(), 1);
    }

    /** A mongod member's lastWrite: the simulated members share the one node's data, so they say what it says. */
    private static final String LAST_WRITE = " lastWrite: {opTime: {ts: {$timestamp: {t: 1700000000, i: 3}}, t: {$numberLong: '2'}},"
            + " lastWriteDate: {$date: '2023-11-14T22:13:20Z'}, majorityOpTime: {ts: {$timestamp: {t: 1700000000, i: 3}},"
            + " t: {$numberLong: '2'}}, majorityWriteDate: {$date: '2023-11-14T22:13:20Z'}}";

    /** A node without lastWrite in its hello (jongodb) gets one of now: the members never lag, and drivers read it for maxStalenessSeconds. */
    @Test
    void aHelloWithoutLastWriteGetsOneOfNowAndANodesOwnStays() {
        long before = System.currentTimeMillis();
        BsonDocument hello = BsonDocument.parse("{isWritablePrimary: true, setName: 'rs0', hosts: ['db.internal:27017'], ok: 1.0}");
        set.rewrite(hello, names.get(2));
        BsonDocument lastWrite = hello.getDocument("lastWrite");
        long date = lastWrite.getDateTime("lastWriteDate").getValue();
        assertTrue(date >= before && date <= System.currentTimeMillis(), lastWrite::toJson);
        assertEquals(lastWrite.getDateTime("lastWriteDate"), lastWrite.getDateTime("majorityWriteDate"));
        assertEquals(lastWrite.getDocument("opTime"), lastWrite.getDocument("majorityOpTime"));
        assertEquals(1, lastWrite.getDocument("opTime").getInt64("t").getValue(), "the term: the set's first election");

        BsonDocument fromMongod = BsonDocument.parse("{isWritablePrimary: true, setName: 'rs0', hosts: ['db.internal:27017'],"
                + LAST_WRITE + ", ok: 1.0}");
        BsonDocument nodes = fromMongod.getDocument("lastWrite").clone();
        set.rewrite(fromMongod, names.get(2));
        assertEquals(nodes, fromMongod.getDocument("lastWrite"));
    }

    /** mongod 4.4's serverStatus names the role ismaster, as its isMaster does: the field stays the one the server used. */
    @Test
    void serverStatusReplIsTheMembersHelloInTheServersOwnWords() {
        BsonDocument status = BsonDocument.parse("{host: 'db.internal:27017', connections: {current: 3},"
                + " repl: {topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '4'}},"
                + " hosts: ['db.internal:27017'], setName: 'rs0', setVersion: 3, ismaster: true, secondary: false,"
                + " primary: 'db.internal:27017', me: 'db.internal:27017', electionId: {$oid: '7fffffff0000000000000001'}, rbid: 1,"
                + LAST_WRITE + "}, ok: 1.0}");
        assertTrue(set.rewriteReply(facts("serverStatus", "admin", ""), status, names.get(1)));
        BsonDocument expectedRepl = BsonDocument.parse("{hosts: ['proxy.local:40000', 'proxy.local:40001', 'proxy.local:40002'],"
                + " setName: 'rs0', setVersion: 1, ismaster: false, secondary: true, primary: 'proxy.local:40000',"
                + " me: 'proxy.local:40001', rbid: 1," + LAST_WRITE + "}");
        expectedRepl.put("topologyVersion", set.topologyVersion(names.get(1))); // the member's own, as its hello's
        assertEquals(expectedRepl, status.getDocument("repl"));
        assertEquals("db.internal:27017", status.getString("host").getValue(), "the process's own host name is not a member name");
        assertEquals(BsonDocument.parse("{current: 3}"), status.getDocument("connections"));
    }

    /**
     * Each member is a process of its own, and an election changes every member's state: each counter
     * moves on, and serverStatus tells the topologyVersion hello tells.
     */
    @Test
    void eachMemberHasItsOwnProcessAndEveryCounterMovesOnWithAnElection() {
        BsonDocument realHello = BsonDocument.parse("{topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'},"
                + " counter: {$numberLong: '4'}}, hosts: ['db.internal:27017'], setName: 'rs0', isWritablePrimary: true,"
                + " secondary: false, primary: 'db.internal:27017', me: 'db.internal:27017', ok: 1.0}");
        Set<BsonValue> processIds = new HashSet<>();
        for (MemberAddress member : names) {
            BsonDocument hello = realHello.clone();
            set.rewriteAndObserve(hello, member);
            processIds.add(hello.getDocument("topologyVersion").get("processId"));
            assertEquals(1, hello.getDocument("topologyVersion").getInt64("counter").getValue(), member + "'s hello");
        }
        assertEquals(3, processIds.size(), "three processes");
        assertFalse(processIds.contains(realHello.getDocument("topologyVersion").get("processId")), "none the real node's");

        set.failover(names.get(1));
        for (MemberAddress member : names) {
            BsonDocument hello = realHello.clone();
            set.rewriteAndObserve(hello, member);
            assertEquals(set.topologyVersion(member), hello.getDocument("topologyVersion"));
            assertEquals(2, hello.getDocument("topologyVersion").getInt64("counter").getValue(), member + "'s hello");
            BsonDocument status = new BsonDocument("repl", realHello.clone()).append("ok", new BsonDouble(1));
            set.rewriteReply(facts("serverStatus", "admin", ""), status, member);
            assertEquals(hello.getDocument("topologyVersion"), status.getDocument("repl").getDocument("topologyVersion"),
                    member + "'s serverStatus.repl");
        }
        set.restoreFirstPrimary();
        assertEquals(3, set.topologyVersion(names.get(2)).getInt64("counter").getValue(), "two elections");
    }

    @Test
    void aServerStatusWithoutAReplicaSetIsLeftAlone() {
        BsonDocument standalone = BsonDocument.parse("{host: 'db.internal:27017', repl: {rbid: 1}, ok: 1.0}");
        assertFalse(set.rewriteReply(facts("serverStatus", "admin", ""), standalone, names.get(0)));
        assertEquals(BsonDocument.parse("{host: 'db.internal:27017', repl: {rbid: 1}, ok: 1.0}"), standalone);
    }

    /** Every simulated member is the real node's entry under its own _id and name; the rest of the config stays. */
    @Test
    void replSetGetConfigListsTheSimulatedMembersLikeTheRealNodesEntry() {
        BsonDocument reply = BsonDocument.parse("{config: {_id: 'rs0', version: 4, term: 2, members: [{_id: 5,"
                + " host: 'db.internal:27017', arbiterOnly: false, priority: 1.0, tags: {dc: 'east'}, votes: 1}],"
                + " protocolVersion: 1, settings: {chainingAllowed: true}}, ok: 1.0}");
        assertTrue(set.rewriteReply(facts("replSetGetConfig", "admin", ""), reply, names.get(2)));
        StringBuilder members = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            members.append(i == 0 ? "" : ", ").append("{_id: ").append(i).append(", host: 'proxy.local:4000").append(i)
                    .append("', arbiterOnly: false, priority: 1.0, tags: {dc: 'east'}, votes: 1}");
        }
        assertEquals(BsonDocument.parse("{_id: 'rs0', version: 1, term: 2, members: [" + members
                + "], protocolVersion: 1, settings: {chainingAllowed: true}}"), reply.getDocument("config"));
    }

    @Test
    void theStoredConfigIsRewrittenInTheCursorsBatch() {
        BsonDocument reply = BsonDocument.parse("{cursor: {id: 0, ns: 'local.system.replset', firstBatch: [{_id: 'rs0',"
                + " version: 4, members: [{_id: 0, host: 'db.internal:27017'}]}]}, ok: 1.0}");
        assertTrue(SetDescriptions.describesTheSet(facts("find", "local", "system.replset")));
        assertFalse(SetDescriptions.describesTheSet(facts("find", "test", "system.replset")));
        assertTrue(set.rewriteReply(facts("find", "local", "system.replset"), reply, names.get(0)));
        assertEquals(List.of("proxy.local:40000", "proxy.local:40001", "proxy.local:40002"),
                reply.getDocument("cursor").getArray("firstBatch").get(0).asDocument().getArray("members").stream()
                        .map(m -> m.asDocument().getString("host").getValue()).toList());
    }

    private static CommandFacts facts(String name, String database, String collection) {
        return new CommandFacts(1, OpCode.OP_MSG, name, database, collection, 0, null, -1, false, "", false, false, null, 0);
    }
}
