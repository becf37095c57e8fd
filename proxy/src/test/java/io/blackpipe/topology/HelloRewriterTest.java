package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.BindException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
        assertTrue(new HelloRewriter(members, true, warnings::add).rewriteReply(reply));
        assertEquals(BsonDocument.parse("{hosts: ['proxy.local:40000', 'unbindable:27017'], me: 'proxy.local:40000'}"), reply);
        assertEquals(1, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).startsWith("cannot proxy member unbindable:27017: "), warnings.get(0));
        assertTrue(warnings.get(0).contains("Address already in use"), warnings.get(0));
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
}
