package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.topology.HelloRewriter;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberMap;
import io.blackpipe.topology.MemberStates;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.MalformedMessageException;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * Which replies of a real replica set's member the proxy changes on their way: those of the
 * commands that describe the set, when they name a member; every other reply is the very frame the
 * member sent (not a re-encoded copy), and an ordinary command's reply is not even decoded.
 */
class ReplyRewritesTest {
    private static final MemberAddress A = MemberAddress.parse("a:27017");
    private static final String STATUS = "{set: 'rs0', myState: 1, syncSourceHost: '', members: [{_id: 0, name: 'a:27017',"
            + " stateStr: 'PRIMARY', syncSourceHost: '', self: true}, {_id: 1, name: 'b:27017', stateStr: 'SECONDARY',"
            + " syncSourceHost: 'a:27017'}], ok: 1.0}";

    private final List<String> opened = new ArrayList<>();
    private final MemberMap members = new MemberMap("proxy.local", 40000, Map.of(), (upstream, port) -> {
        opened.add(upstream.toString());
        return port;
    });
    private final Member member = members.ensure(A);

    private PipeContext context(boolean replicaSet) {
        return new PipeContext(null, null, null, null, false, new HelloRewriter(members, replicaSet, w -> { }), new MemberStates(),
                null, 0, null, null, null, null, null, null, null, null, null, null, null, null);
    }

    private ByteBuf reply(String body, int flags) {
        return Unpooled.wrappedBuffer(ScriptedMongodWire.buildOpMsg(11, 7, flags, BsonDocument.parse(body), null));
    }

    private ByteBuf rewrite(ByteBuf frame, CommandFacts command, boolean replicaSet) {
        return ReplyRewrites.asThisMemberWouldSay(frame, ReplyFacts.of(frame), command, context(replicaSet), member,
                ByteBufAllocator.DEFAULT);
    }

    @Test
    void aReplyThatNamesAMemberIsReplacedByOneNamingTheProxyWithAValidChecksum() throws Exception {
        ByteBuf frame = reply(STATUS, ScriptedMongodWire.FLAG_CHECKSUM_PRESENT);
        ByteBuf out = rewrite(frame, facts("replSetGetStatus", "admin", ""), true);
        try {
            assertNotSame(frame, out);
            assertEquals(0, frame.refCnt(), "the member's frame is released once replaced");
            byte[] bytes = ByteBufUtil.getBytes(out);
            assertEquals(bytes.length, ScriptedMongodWire.messageLength(bytes));
            assertTrue(ScriptedMongodWire.checksumValid(bytes), "the checksum is the rewritten message's");
            assertEquals(7, ScriptedMongodWire.responseTo(bytes));
            BsonDocument status = ScriptedMongodWire.parseOpMsg(bytes).body();
            assertEquals("proxy.local:40000", status.getArray("members").get(0).asDocument().getString("name").getValue());
            assertEquals("proxy.local:40001", status.getArray("members").get(1).asDocument().getString("name").getValue());
            assertEquals("proxy.local:40000", status.getArray("members").get(1).asDocument().getString("syncSourceHost").getValue());
        } finally {
            out.release();
        }
    }

    /** Nothing to change: the member's own frame goes on, not a copy encoded anew. */
    @Test
    void aReplyWithNothingToRewriteIsTheMembersOwnFrame() {
        List<Object[]> untouched = List.of(
                new Object[] {facts("serverStatus", "admin", ""), "{host: 'db-a', connections: {current: 1}, ok: 1.0}", true},
                new Object[] {facts("find", "local", "system.replset"), "{cursor: {id: 0, ns: 'local.system.replset',"
                        + " firstBatch: []}, ok: 1.0}", true},
                new Object[] {facts("replSetGetStatus", "test", ""), "{ok: 0.0, errmsg: 'replSetGetStatus may only be run against"
                        + " the admin database.', code: 13, codeName: 'Unauthorized'}", true},
                new Object[] {facts("find", "test", "members"), "{cursor: {id: 0, ns: 'test.members',"
                        + " firstBatch: [{members: [{host: 'a:27017', name: 'a:27017'}]}]}, ok: 1.0}", true},
                // a standalone or mongos upstream: addresses are left alone, whatever the reply says
                new Object[] {facts("replSetGetStatus", "admin", ""), STATUS, false});
        for (Object[] c : untouched) {
            ByteBuf frame = reply((String) c[1], 0);
            ByteBuf out = rewrite(frame, (CommandFacts) c[0], (Boolean) c[2]);
            assertSame(frame, out, c[1].toString());
            assertEquals(1, out.refCnt());
            out.release();
        }
        assertEquals(List.of("a:27017"), opened, "no listener opened for a member of a reply left alone");
    }

    /**
     * An ordinary command's reply is not decoded at all, nor is any reply of a standalone or mongos:
     * its body here cannot be (an element of an unknown type inside a document), and it goes on as
     * it is, while the same body as a replica set member's replSetGetStatus reply is decoded and refused.
     */
    @Test
    void anOrdinaryCommandsReplyIsNotDecoded() {
        byte[] bytes = ScriptedMongodWire.buildOpMsg(11, 7, 0, BsonDocument.parse("{x: {y: 1}, ok: 1.0}"), null);
        int type = ScriptedMongodWire.indexOf(bytes, new byte[] {0x10, 'y', 0}); // x's element y, an int32
        bytes[type] = 0x7e; // a type no BSON reader knows
        ByteBuf frame = Unpooled.wrappedBuffer(bytes);
        ByteBuf out = rewrite(frame, facts("insert", "test", "c"), true);
        assertSame(frame, out);
        ByteBuf standalone = rewrite(out, facts("serverStatus", "admin", ""), false);
        assertSame(frame, standalone, "nor is a standalone's or a mongos's, which name no members to rewrite");
        standalone.release();

        ByteBuf describing = Unpooled.wrappedBuffer(bytes.clone());
        try {
            assertThrows(MalformedMessageException.class, () -> rewrite(describing, facts("replSetGetStatus", "admin", ""), true));
        } finally {
            describing.release();
        }
    }

    private static CommandFacts facts(String name, String database, String collection) {
        return new CommandFacts(3, OpCode.OP_MSG, name, database, collection, 0, null, -1, false, "", false, false, null, 0);
    }
}
