package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class DiscoveryTest {
    private static final MemberAddress SEED = MemberAddress.parse("seed.example:27017");

    @Test
    void replicaSetListsHostsPassivesAndArbitersOnce() {
        BsonDocument hello = BsonDocument.parse("{isWritablePrimary: false, secondary: true, setName: 'rs0',"
                + " hosts: ['A.example:27017', 'b.example:27017'], passives: ['c.example:27017'],"
                + " arbiters: ['d.example:27017', 'b.example:27017'], me: 'b.example:27017', ok: 1.0}");
        Discovery.Deployment d = Discovery.describe(SEED, hello, false);
        assertTrue(d.isReplicaSet());
        assertEquals("rs0", d.setName());
        assertEquals("replica set", d.kind());
        assertEquals(List.of(MemberAddress.parse("a.example:27017"), MemberAddress.parse("b.example:27017"),
                MemberAddress.parse("c.example:27017"), MemberAddress.parse("d.example:27017")), d.members());
    }

    @Test
    void replicaSetMemberListingNoHostsIsProxiedAsTheSeed() {
        Discovery.Deployment d = Discovery.describe(SEED, BsonDocument.parse("{setName: 'rs0', ok: 1.0}"), false);
        assertEquals("rs0", d.setName());
        assertEquals(List.of(SEED), d.members());
    }

    @Test
    void standalone() {
        Discovery.Deployment d = Discovery.describe(SEED, BsonDocument.parse("{ismaster: true, maxWireVersion: 21, ok: 1.0}"), false);
        assertFalse(d.isReplicaSet());
        assertNull(d.setName());
        assertEquals("standalone", d.kind());
        assertEquals(List.of(SEED), d.members());
    }

    @Test
    void mongosIsRecognisedByIsdbgrid() {
        Discovery.Deployment d = Discovery.describe(SEED, BsonDocument.parse("{ismaster: true, msg: 'isdbgrid', ok: 1.0}"), false);
        assertFalse(d.isReplicaSet());
        assertEquals("mongos", d.kind());
        assertEquals(List.of(SEED), d.members());
        assertEquals("mongos", Discovery.describe(SEED, BsonDocument.parse("{msg: 'isdbgrid'}"), true).kind());
    }

    @Test
    void directConnectionToAReplicaSetMemberProxiesOnlyThatMemberDialledThroughTheSeed() {
        BsonDocument hello = BsonDocument.parse("{setName: 'rs0', hosts: ['a:27017', 'b:27017'], me: 'B:27017', ok: 1.0}");
        Discovery.Deployment d = Discovery.describe(SEED, hello, true);
        assertTrue(d.isReplicaSet());
        assertEquals("rs0", d.setName());
        assertEquals("replica set member (direct connection)", d.kind());
        assertEquals(List.of(MemberAddress.parse("b:27017")), d.members(), "only the member we reached, by its set name");
        assertEquals(Map.of(MemberAddress.parse("b:27017"), SEED), d.dialAliases(), "its set name is reached via the seed");
    }

    @Test
    void withoutDirectConnectionThereAreNoDialAliases() {
        BsonDocument hello = BsonDocument.parse("{setName: 'rs0', hosts: ['a:27017'], me: 'a:27017', ok: 1.0}");
        assertEquals(Map.of(), Discovery.describe(SEED, hello, false).dialAliases());
        assertEquals(Map.of(), Discovery.describe(SEED, BsonDocument.parse("{ismaster: true}"), true).dialAliases());
    }

    @Test
    void directConnectionToAStandaloneIsAStandalone() {
        Discovery.Deployment d = Discovery.describe(SEED, BsonDocument.parse("{ismaster: true, ok: 1.0}"), true);
        assertFalse(d.isReplicaSet());
        assertEquals("standalone", d.kind());
        assertEquals(List.of(SEED), d.members());
    }

    @Test
    void aSeedOfTheSetTheUriNamesIsInIt() {
        BsonDocument hello = BsonDocument.parse("{setName: 'rs0', hosts: ['a:27017'], ok: 1.0}");
        assertNull(Discovery.notInSet("rs0", hello));
        assertNull(Discovery.notInSet(null, hello), "without replicaSet any set will do");
        assertNull(Discovery.notInSet(null, BsonDocument.parse("{ismaster: true, ok: 1.0}")), "and so will a standalone");
    }

    @Test
    void aSeedOfAnotherSetOrOfNoneIsNot() {
        assertEquals("reports setName 'rs1'", Discovery.notInSet("rs0", BsonDocument.parse("{setName: 'rs1', ok: 1.0}")));
        assertEquals("reports setName 'RS0'", Discovery.notInSet("rs0", BsonDocument.parse("{setName: 'RS0', ok: 1.0}")),
                "set names compare exactly, as drivers compare them");
        assertEquals("is a standalone (its hello has no setName)",
                Discovery.notInSet("rs0", BsonDocument.parse("{ismaster: true, maxWireVersion: 21, ok: 1.0}")));
        assertEquals("is a mongos (its hello has no setName)",
                Discovery.notInSet("rs0", BsonDocument.parse("{ismaster: true, msg: 'isdbgrid', ok: 1.0}")));
        assertEquals("is a replica set member not yet initiated (its hello has isreplicaset: true and no setName)",
                Discovery.notInSet("rs0", BsonDocument.parse("{ismaster: false, isreplicaset: true, ok: 1.0}")));
    }

    @Test
    void aSeedWhoseHostDoesNotResolveIsSaidToBeUnknown() {
        IllegalStateException failed = assertThrows(IllegalStateException.class,
                () -> Discovery.discover(UpstreamUri.parse("mongodb://no-such-host.invalid:27017/"), 2000, line -> { }));
        // it read "no-such-host.invalid:27017 (no-such-host.invalid)": the exception's message is the bare host
        assertEquals("no upstream seed answered hello: no-such-host.invalid:27017 (unknown host no-such-host.invalid)",
                failed.getMessage());
    }
}
