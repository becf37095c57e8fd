package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.OpCode;
import java.net.BindException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class HelloRewriterTest {
    private final List<String> opened = new ArrayList<>();
    private final List<String> warnings = new ArrayList<>();
    private MemberMap members;

    @BeforeEach
    void startWithTwoKnownMembers() {
        members = new MemberMap("proxy.local", 40000, Map.of(), (upstream, port) -> {
            if (upstream.host().startsWith("unbindable")) {
                throw new BindException("Address already in use");
            }
            opened.add(upstream + "@" + port);
            return port;
        });
        members.ensure(MemberAddress.parse("a:27017"));
        members.ensure(MemberAddress.parse("b:27017"));
    }

    private static List<String> keys(BsonDocument doc) {
        return List.copyOf(doc.keySet());
    }

    @Test
    void replicaSetReplyNamesOnlyTheProxy() {
        BsonDocument reply = BsonDocument.parse("{"
                + "isWritablePrimary: true, topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '4'}},"
                + " hosts: ['a:27017', 'b:27017'], passives: ['c:27017'], arbiters: ['d:27017'], setName: 'rs0', setVersion: 3,"
                + " primary: 'a:27017', me: 'b:27017', electionId: {$oid: '7fffffff0000000000000002'},"
                + " compression: ['snappy', 'zstd'], maxWireVersion: 21, ok: 1.0}");
        BsonDocument expected = BsonDocument.parse("{"
                + "isWritablePrimary: true, topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '4'}},"
                + " hosts: ['proxy.local:40000', 'proxy.local:40001'], passives: ['proxy.local:40002'],"
                + " arbiters: ['proxy.local:40003'], setName: 'rs0', setVersion: 3,"
                + " primary: 'proxy.local:40000', me: 'proxy.local:40001', electionId: {$oid: '7fffffff0000000000000002'},"
                + " maxWireVersion: 21, ok: 1.0}");
        HelloRewriter rewriter = new HelloRewriter(members, true, warnings::add);
        assertTrue(rewriter.rewriteReply(reply));
        assertEquals(expected, reply);
        assertEquals(keys(expected), keys(reply), "fields keep their order");
        assertEquals(List.of("a:27017@40000", "b:27017@40001", "c:27017@40002", "d:27017@40003"), opened,
                "members first seen in the reply got listeners");
        assertEquals(4, members.members().size());
        assertTrue(warnings.isEmpty(), warnings.toString());
    }

    @Test
    void knownMembersInAnotherCaseReuseTheirListener() {
        BsonDocument reply = BsonDocument.parse("{hosts: ['A:27017', 'B:27017'], primary: 'A:27017', me: 'b:27017', setName: 'rs0'}");
        assertTrue(new HelloRewriter(members, true, warnings::add).rewriteReply(reply));
        assertEquals(BsonDocument.parse("{hosts: ['proxy.local:40000', 'proxy.local:40001'], primary: 'proxy.local:40000',"
                + " me: 'proxy.local:40001', setName: 'rs0'}"), reply);
        assertEquals(2, opened.size(), "no new listener: " + opened);
    }

    @Test
    void secondaryReplyWithoutPrimaryRewritesWhatItHas() {
        BsonDocument reply = BsonDocument.parse("{secondary: true, hosts: ['a:27017', 'b:27017'], me: 'a:27017', setName: 'rs0'}");
        assertTrue(new HelloRewriter(members, true, warnings::add).rewriteReply(reply));
        assertEquals(BsonDocument.parse("{secondary: true, hosts: ['proxy.local:40000', 'proxy.local:40001'],"
                + " me: 'proxy.local:40000', setName: 'rs0'}"), reply);
        assertFalse(reply.containsKey("primary"), "no primary is invented");
    }

    @Test
    void nonStringEntriesAreLeftAlone() {
        BsonDocument reply = BsonDocument.parse("{hosts: ['a:27017', 42], primary: null, me: 'b:27017'}");
        assertTrue(new HelloRewriter(members, true, warnings::add).rewriteReply(reply));
        assertEquals(BsonDocument.parse("{hosts: ['proxy.local:40000', 42], primary: null, me: 'proxy.local:40001'}"), reply);
    }

    @Test
    void memberWhoseListenerCannotOpenIsWarnedAboutAndLeftAsIs() {
        BsonDocument reply = BsonDocument.parse("{hosts: ['a:27017', 'unbindable:27017'], me: 'a:27017'}");
        HelloRewriter rewriter = new HelloRewriter(members, true, warnings::add);
        assertTrue(rewriter.rewriteReply(reply));
        rewriter.rewriteReply(BsonDocument.parse("{hosts: ['a:27017', 'unbindable:27017'], me: 'a:27017'}"));
        assertEquals(BsonDocument.parse("{hosts: ['proxy.local:40000', 'unbindable:27017'], me: 'proxy.local:40000'}"), reply);
        assertEquals(1, warnings.size(), "once per host, however often it is named: " + warnings);
        assertTrue(warnings.get(0).startsWith("cannot proxy member unbindable:27017: "), warnings.get(0));
        assertTrue(warnings.get(0).contains("Address already in use"), warnings.get(0));
    }

    @Test
    void aConfigurationSentThroughTheProxyNamesTheMembersAsTheyAre() {
        HelloRewriter rewriter = new HelloRewriter(members, true, warnings::add);
        rewriter.rewriteReply(BsonDocument.parse("{hosts: ['a:27017', 'b:27017'], me: 'a:27017'}")); // proxy.local:40000, :40001
        BsonDocument reconfig = BsonDocument.parse("{replSetReconfig: {_id: 'rs0', version: 2, members: [{_id: 0, host: 'proxy.local:40000'},"
                + " {_id: 1, host: 'proxy.local:40001'}, {_id: 2, host: 'c:27017'}, {_id: 3, host: 'not an address'}]}, $db: 'admin'}");
        assertTrue(rewriter.namingTheMembers("replSetReconfig", reconfig));
        assertEquals(BsonDocument.parse("{replSetReconfig: {_id: 'rs0', version: 2, members: [{_id: 0, host: 'a:27017'},"
                + " {_id: 1, host: 'b:27017'}, {_id: 2, host: 'c:27017'}, {_id: 3, host: 'not an address'}]}, $db: 'admin'}"), reconfig);
        assertFalse(rewriter.namingTheMembers("replSetReconfig", reconfig), "nothing left to change");
        BsonDocument standalone = BsonDocument.parse("{replSetInitiate: {_id: 'rs0', members: [{_id: 0, host: 'proxy.local:40000'}]}}");
        assertFalse(new HelloRewriter(members, false, warnings::add).namingTheMembers("replSetInitiate", standalone));
        assertFalse(rewriter.namingTheMembers("replSetInitiate", BsonDocument.parse("{replSetInitiate: 1}")), "no config given");
        assertEquals(List.of(), warnings);
    }

    @Test
    void unparsableHostIsWarnedAboutAndLeftAsIs() {
        BsonDocument reply = BsonDocument.parse("{hosts: ['a:27017', 'weird:port'], me: 'a:27017'}");
        assertTrue(new HelloRewriter(members, true, warnings::add).rewriteReply(reply));
        assertEquals("weird:port", reply.getArray("hosts").get(1).asString().getValue());
        assertEquals(1, warnings.size());
        assertTrue(warnings.get(0).contains("weird:port") && warnings.get(0).contains("is not a number"), warnings.get(0));
    }

    @Test
    void nonReplicaSetModeLeavesAddressesButRemovesCompression() {
        BsonDocument reply = BsonDocument.parse("{ismaster: true, msg: 'isdbgrid', me: 'x:1', hosts: ['x:1'],"
                + " compression: ['zlib'], ok: 1.0}");
        assertTrue(new HelloRewriter(members, false, warnings::add).rewriteReply(reply));
        assertEquals(BsonDocument.parse("{ismaster: true, msg: 'isdbgrid', me: 'x:1', hosts: ['x:1'], ok: 1.0}"), reply);
        assertEquals(2, opened.size(), "no listener opened in non-replica-set mode");
    }

    @Test
    void nothingToChangeReportsFalse() {
        BsonDocument standalone = BsonDocument.parse("{ismaster: true, maxWireVersion: 21, ok: 1.0}");
        BsonDocument copy = standalone.clone();
        assertFalse(new HelloRewriter(members, false, warnings::add).rewriteReply(standalone));
        assertEquals(copy, standalone);
        BsonDocument noHosts = BsonDocument.parse("{ismaster: true, ok: 1.0}");
        assertFalse(new HelloRewriter(members, true, warnings::add).rewriteReply(noHosts));
        assertEquals(BsonDocument.parse("{ismaster: true, ok: 1.0}"), noHosts);
    }

    @Test
    void stripCompressionRemovesOnlyTheCompressorList() {
        BsonDocument handshake = BsonDocument.parse("{hello: 1, client: {application: {name: 'x'}}, compression: ['snappy'], $db: 'admin'}");
        HelloRewriter.stripCompression(handshake);
        assertEquals(BsonDocument.parse("{hello: 1, client: {application: {name: 'x'}}, $db: 'admin'}"), handshake);
        HelloRewriter.stripCompression(handshake);
        assertEquals(3, handshake.size(), "stripping twice is harmless");
    }

    // ---- the other replies that describe the set: every member named as hello names it

    /** A secondary's replSetGetStatus as mongod 8.0 shapes it: b is this member, syncing from a; c syncs from b. */
    @Test
    void replSetGetStatusNamesEveryMemberAndSyncSourceAsHelloDoes() {
        BsonDocument status = BsonDocument.parse("{set: 'rs0', date: {$date: '2025-01-01T00:00:00Z'}, myState: 2,"
                + " term: {$numberLong: '3'}, syncSourceHost: 'a:27017', syncSourceId: 0, heartbeatIntervalMillis: 2000,"
                + " majorityVoteCount: 2, optimes: {appliedOpTime: {ts: {$timestamp: {t: 1, i: 1}}, t: 3}},"
                + " electionParticipantMetrics: {votedForCandidate: true, electionCandidateMemberId: 0},"
                + " members: ["
                + "{_id: 0, name: 'a:27017', health: 1.0, state: 1, stateStr: 'PRIMARY', syncSourceHost: '', syncSourceId: -1,"
                + " infoMessage: '', lastHeartbeatMessage: ''},"
                + "{_id: 1, name: 'b:27017', health: 1.0, state: 2, stateStr: 'SECONDARY', syncSourceHost: 'a:27017', syncSourceId: 0,"
                + " infoMessage: '', self: true, lastHeartbeatMessage: ''},"
                + "{_id: 2, name: 'c:27017', health: 0.0, state: 8, stateStr: '(not reachable/healthy)', syncSourceHost: 'b:27017',"
                + " syncSourceId: 1, infoMessage: '', lastHeartbeatMessage: 'Error connecting to c:27017 :: caused by :: refused'}],"
                + " ok: 1.0, operationTime: {$timestamp: {t: 1, i: 1}}}");
        BsonDocument expected = BsonDocument.parse("{set: 'rs0', date: {$date: '2025-01-01T00:00:00Z'}, myState: 2,"
                + " term: {$numberLong: '3'}, syncSourceHost: 'proxy.local:40000', syncSourceId: 0, heartbeatIntervalMillis: 2000,"
                + " majorityVoteCount: 2, optimes: {appliedOpTime: {ts: {$timestamp: {t: 1, i: 1}}, t: 3}},"
                + " electionParticipantMetrics: {votedForCandidate: true, electionCandidateMemberId: 0},"
                + " members: ["
                + "{_id: 0, name: 'proxy.local:40000', health: 1.0, state: 1, stateStr: 'PRIMARY', syncSourceHost: '', syncSourceId: -1,"
                + " infoMessage: '', lastHeartbeatMessage: ''},"
                + "{_id: 1, name: 'proxy.local:40001', health: 1.0, state: 2, stateStr: 'SECONDARY',"
                + " syncSourceHost: 'proxy.local:40000', syncSourceId: 0, infoMessage: '', self: true, lastHeartbeatMessage: ''},"
                + "{_id: 2, name: 'proxy.local:40002', health: 0.0, state: 8, stateStr: '(not reachable/healthy)',"
                + " syncSourceHost: 'proxy.local:40001', syncSourceId: 1, infoMessage: '',"
                + " lastHeartbeatMessage: 'Error connecting to c:27017 :: caused by :: refused'}],"
                + " ok: 1.0, operationTime: {$timestamp: {t: 1, i: 1}}}");
        HelloRewriter rewriter = new HelloRewriter(members, true, warnings::add);
        assertTrue(rewriter.rewriteSetDescription(facts("replSetGetStatus", "admin", ""), status));
        assertEquals(expected, status, "free text (lastHeartbeatMessage) is left as the server wrote it");
        assertEquals(keys(expected), keys(status), "fields keep their order");
        assertEquals(keys(expected.getArray("members").get(1).asDocument()), keys(status.getArray("members").get(1).asDocument()));
        assertEquals(List.of("a:27017@40000", "b:27017@40001", "c:27017@40002"), opened,
                "a member first seen in replSetGetStatus gets a listener, as one first seen in a hello does");
        assertTrue(warnings.isEmpty(), warnings.toString());
    }

    /** A member in initial sync (STARTUP2) reports each attempt's sync source; servers before 4.4 also said syncingTo. */
    @Test
    void initialSyncSourcesAndTheOldSyncingToAreMembersToo() {
        BsonDocument status = BsonDocument.parse("{set: 'rs0', myState: 5, syncingTo: 'a:27017', syncSourceHost: 'a:27017',"
                + " initialSyncStatus: {failedInitialSyncAttempts: 1, initialSyncAttempts: [{durationMillis: 10,"
                + " status: 'InitialSyncFailure', syncSource: 'b:27017', rollBackId: 1}]},"
                + " members: [{_id: 0, name: 'a:27017', syncingTo: ''}, {_id: 1, name: 'b:27017', syncingTo: 'a:27017', self: true}],"
                + " ok: 1.0}");
        assertTrue(new HelloRewriter(members, true, warnings::add).rewriteSetDescription(facts("replSetGetStatus", "admin", ""), status));
        assertEquals(BsonDocument.parse("{set: 'rs0', myState: 5, syncingTo: 'proxy.local:40000', syncSourceHost: 'proxy.local:40000',"
                + " initialSyncStatus: {failedInitialSyncAttempts: 1, initialSyncAttempts: [{durationMillis: 10,"
                + " status: 'InitialSyncFailure', syncSource: 'proxy.local:40001', rollBackId: 1}]},"
                + " members: [{_id: 0, name: 'proxy.local:40000', syncingTo: ''},"
                + " {_id: 1, name: 'proxy.local:40001', syncingTo: 'proxy.local:40000', self: true}], ok: 1.0}"), status);
    }

    /** A hidden member is in the config but never in hello: it gets its listener here, as a new member in hello would. */
    @Test
    void replSetGetConfigNamesEveryMemberHiddenOnesToo() {
        BsonDocument reply = BsonDocument.parse("{config: {_id: 'rs0', version: 4, term: 2, members: ["
                + "{_id: 0, host: 'a:27017', arbiterOnly: false, priority: 1.0, tags: {dc: 'east'}, votes: 1},"
                + "{_id: 1, host: 'b:27017', arbiterOnly: false, priority: 1.0, tags: {}, votes: 1},"
                + "{_id: 2, host: 'hidden:27017', hidden: true, priority: 0.0, secondaryDelaySecs: 3600, votes: 0}],"
                + " protocolVersion: 1, settings: {chainingAllowed: true, replicaSetId: {$oid: '0102030405060708090a0b0c'}}}, ok: 1.0}");
        assertTrue(new HelloRewriter(members, true, warnings::add).rewriteSetDescription(facts("replSetGetConfig", "admin", ""), reply));
        assertEquals(BsonDocument.parse("{config: {_id: 'rs0', version: 4, term: 2, members: ["
                + "{_id: 0, host: 'proxy.local:40000', arbiterOnly: false, priority: 1.0, tags: {dc: 'east'}, votes: 1},"
                + "{_id: 1, host: 'proxy.local:40001', arbiterOnly: false, priority: 1.0, tags: {}, votes: 1},"
                + "{_id: 2, host: 'proxy.local:40002', hidden: true, priority: 0.0, secondaryDelaySecs: 3600, votes: 0}],"
                + " protocolVersion: 1, settings: {chainingAllowed: true, replicaSetId: {$oid: '0102030405060708090a0b0c'}}}, ok: 1.0}"),
                reply);
        assertEquals("proxy.local:40002", members.byUpstream(MemberAddress.parse("hidden:27017")).advertised().toString());
    }

    /** The repl section is hello's (plus, with repl: 1, replicationProgress); the process's own host field is not a member name. */
    @Test
    void serverStatusReplNamesTheMembersAsHelloAndItsReplicationProgressToo() {
        BsonDocument status = BsonDocument.parse("{host: 'db-host-b', version: '8.0.4', process: 'mongod',"
                + " repl: {topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '4'}},"
                + " hosts: ['a:27017', 'b:27017'], arbiters: ['c:27017'], setName: 'rs0', setVersion: 4, isWritablePrimary: false,"
                + " secondary: true, primary: 'a:27017', me: 'b:27017', lastWrite: {opTime: {t: 3}},"
                + " replicationProgress: [{host: 'a:27017', optime: {t: 3}, memberId: 0}, {host: 'b:27017', optime: {t: 3}, memberId: 1}],"
                + " primaryOnlyServices: {}, rbid: 1, userWriteBlockMode: 1}, ok: 1.0}");
        assertTrue(new HelloRewriter(members, true, warnings::add).rewriteSetDescription(facts("serverStatus", "admin", ""), status));
        assertEquals(BsonDocument.parse("{host: 'db-host-b', version: '8.0.4', process: 'mongod',"
                + " repl: {topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '4'}},"
                + " hosts: ['proxy.local:40000', 'proxy.local:40001'], arbiters: ['proxy.local:40002'], setName: 'rs0', setVersion: 4,"
                + " isWritablePrimary: false, secondary: true, primary: 'proxy.local:40000', me: 'proxy.local:40001',"
                + " lastWrite: {opTime: {t: 3}}, replicationProgress: [{host: 'proxy.local:40000', optime: {t: 3}, memberId: 0},"
                + " {host: 'proxy.local:40001', optime: {t: 3}, memberId: 1}], primaryOnlyServices: {}, rbid: 1, userWriteBlockMode: 1},"
                + " ok: 1.0}"), status);
    }

    @Test
    void theStoredConfigurationIsNamedAsReplSetGetConfigsInFindAndGetMoreBatches() {
        HelloRewriter rewriter = new HelloRewriter(members, true, warnings::add);
        BsonDocument first = BsonDocument.parse("{cursor: {id: {$numberLong: '7'}, ns: 'local.system.replset', firstBatch: [{_id: 'rs0',"
                + " version: 4, members: [{_id: 0, host: 'a:27017'}, {_id: 1, host: 'b:27017'}]}]}, ok: 1.0}");
        assertTrue(rewriter.rewriteSetDescription(facts("find", "local", "system.replset"), first));
        assertEquals(List.of("proxy.local:40000", "proxy.local:40001"), hosts(first.getDocument("cursor").getArray("firstBatch")));
        BsonDocument next = BsonDocument.parse("{cursor: {id: {$numberLong: '0'}, ns: 'local.system.replset', nextBatch: [{_id: 'rs0',"
                + " members: [{_id: 1, host: 'b:27017'}]}]}, ok: 1.0}");
        assertTrue(rewriter.rewriteSetDescription(facts("getMore", "local", "system.replset"), next));
        assertEquals(List.of("proxy.local:40001"), hosts(next.getDocument("cursor").getArray("nextBatch")));
    }

    @Test
    void aMemberTheProxyCannotFrontKeepsItsAddressInEveryReplyWithAWarningAsInHello() {
        BsonDocument config = BsonDocument.parse("{config: {_id: 'rs0', members: [{_id: 0, host: 'a:27017'},"
                + " {_id: 1, host: 'unbindable:27017'}, {_id: 2, host: 'weird:port'}]}, ok: 1.0}");
        assertTrue(new HelloRewriter(members, true, warnings::add).rewriteSetDescription(facts("replSetGetConfig", "admin", ""), config));
        assertEquals(List.of("proxy.local:40000", "unbindable:27017", "weird:port"), hosts(new BsonArray(List.of(config.getDocument("config")))));
        assertEquals(2, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).startsWith("cannot proxy member unbindable:27017: ") && warnings.get(0).contains("Address already in use"),
                warnings.get(0));
        assertTrue(warnings.get(1).startsWith("cannot proxy member weird:port: "), warnings.get(1));

        BsonDocument onlyUnproxied = BsonDocument.parse("{config: {_id: 'rs0', members: [{_id: 1, host: 'unbindable:27017'}]}, ok: 1.0}");
        assertFalse(new HelloRewriter(members, true, warnings::add).rewriteSetDescription(facts("replSetGetConfig", "admin", ""),
                onlyUnproxied), "nothing changed, so the reply passes as it came");
        assertEquals(BsonDocument.parse("{config: {_id: 'rs0', members: [{_id: 1, host: 'unbindable:27017'}]}, ok: 1.0}"), onlyUnproxied);
    }

    /** What passes untouched (so byte for byte): nothing that names a member, and any other command's reply. */
    @Test
    void aReplyThatNamesNoMemberIsLeftAloneAndSaysSo() {
        HelloRewriter rewriter = new HelloRewriter(members, true, warnings::add);
        List<Object[]> untouched = List.of(
                new Object[] {facts("find", "local", "system.replset"), "{cursor: {id: 0, ns: 'local.system.replset', firstBatch: []}, ok: 1.0}"},
                new Object[] {facts("serverStatus", "admin", ""), "{host: 'db-host-b', connections: {current: 3}, ok: 1.0}"},
                new Object[] {facts("serverStatus", "admin", ""), "{host: 'db-host-b', repl: {isWritablePrimary: true, rbid: 1}, ok: 1.0}"},
                new Object[] {facts("replSetGetStatus", "admin", ""), "{set: 'rs0', myState: 1, syncSourceHost: '', members: [], ok: 1.0}"},
                new Object[] {facts("replSetGetConfig", "admin", ""), "{ok: 1.0}"},
                new Object[] {facts("find", "test", "system.replset"), "{cursor: {id: 0, ns: 'test.system.replset',"
                        + " firstBatch: [{members: [{host: 'a:27017'}]}]}, ok: 1.0}"},
                new Object[] {facts("insert", "admin", "c"), "{n: 1, members: [{name: 'a:27017'}], ok: 1.0}"});
        for (Object[] pair : untouched) {
            BsonDocument reply = BsonDocument.parse((String) pair[1]);
            CommandFacts command = (CommandFacts) pair[0];
            assertFalse(rewriter.rewriteSetDescription(command, reply), command.name() + " " + pair[1]);
            assertEquals(BsonDocument.parse((String) pair[1]), reply);
        }
        assertEquals(2, opened.size(), "no listener opened: " + opened);
    }

    @Test
    void aStandaloneOrMongosNamesNoMembersSoItsRepliesAreLeftAlone() {
        HelloRewriter rewriter = new HelloRewriter(members, false, warnings::add);
        assertFalse(rewriter.rewritesAddresses());
        BsonDocument config = BsonDocument.parse("{config: {_id: 'rs0', members: [{_id: 0, host: 'x:1'}]}, ok: 1.0}");
        assertFalse(rewriter.rewriteSetDescription(facts("replSetGetConfig", "admin", ""), config));
        assertEquals("x:1", hosts(new BsonArray(List.of(config.getDocument("config")))).get(0));
        assertEquals(2, opened.size(), "no listener opened: " + opened);
    }

    /** The hosts of every member of every configuration in {@code configs}. */
    private static List<String> hosts(BsonArray configs) {
        return configs.stream().flatMap(c -> c.asDocument().getArray("members").stream())
                .map(m -> m.asDocument().getString("host").getValue()).toList();
    }

    private static CommandFacts facts(String name, String database, String collection) {
        return new CommandFacts(1, OpCode.OP_MSG, name, database, collection, 0, null, -1, false, "", false, false, null, 0);
    }
}
