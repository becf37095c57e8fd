package io.blackpipe.topology;

import static io.blackpipe.wire.WireFixtures.buf;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.blackpipe.testing.Await;
import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.OpMsg;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * A simulated member's hello reply passes on an event loop while a failover (an admin's, a scenario's,
 * a reset's) moves the primary role on another thread. The reply must be the member's word at one
 * moment, before the failover or after it: a reply that says "I am primary" with the new primary's name
 * and the new election's id makes the driver take a secondary for the newest primary, and the proxy
 * record it as primary (where rules and faults on "primary" then land) until its next hello.
 *
 * <p>The test holds the member map, which the rewrite reads for every address it writes, so the hello's
 * rewrite stops after it has begun; the failover then tries to run in the middle of it.
 */
class SimulatedHelloDuringFailoverTest {
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;
    private static final MemberAddress REAL = MemberAddress.parse("db.internal:27017");
    private static final BsonDocument REAL_HELLO = BsonDocument.parse("{isWritablePrimary: true, secondary: false,"
            + " setName: 'rs0', hosts: ['db.internal:27017'], primary: 'db.internal:27017', me: 'db.internal:27017',"
            + " electionId: {$oid: '7fffffff0000000000000001'}, maxWireVersion: 21, ok: 1.0}");

    private final List<MemberAddress> names = SimulatedReplicaSet.names(REAL, 3);
    private final MemberMap addresses = new MemberMap("proxy.local", 40000, Map.of(), (upstream, port) -> port);
    private final MemberStates states = new MemberStates();

    @Test
    void aHelloRewrittenAsTheRoleMovesIsTheMembersWordBeforeOrAfterIt() throws Exception {
        names.forEach(addresses::ensure);
        SimulatedReplicaSet set = new SimulatedReplicaSet("rs0", names, addresses, states, 1);
        set.observe(REAL_HELLO);
        MemberAddress first = names.get(0);
        HelloExchange exchange = new HelloExchange(new HelloRewriter(addresses, false, warning -> { }), states, first, set);
        ByteBuf request = buf(opMsg(1, 0, 0).body("{hello: 1, $db: 'admin'}").build());
        OpMsg msg = OpMsg.parse(request);
        exchange.onRequest(ALLOC, request, CommandFacts.ofOpMsg(request, msg), msg, null).release();

        AtomicReference<BsonDocument> passed = new AtomicReference<>();
        Thread hello = new Thread(() -> {
            ByteBuf reply = exchange.onReply(ALLOC, buf(opMsg(2, 1, 0).body(REAL_HELLO.toJson()).build()));
            OpMsg replyMsg = OpMsg.parse(reply);
            passed.set(BsonIo.decode(reply, replyMsg.bodyOffset(), replyMsg.sectionsEnd()));
            reply.release();
        }, "event-loop");
        Thread failover = new Thread(() -> { // as MemberRoles.failover() does it
            set.failover(names.get(1));
            set.observe(REAL_HELLO);
        }, "admin");
        synchronized (addresses) {
            hello.start();
            awaitBlocked(hello);
            failover.start();
            Await.until(Duration.ofSeconds(10), "the failover to run or wait", () -> failover.getState() == Thread.State.BLOCKED
                    || failover.getState() == Thread.State.TERMINATED);
        }
        hello.join(10_000);
        failover.join(10_000);
        assertFalse(hello.isAlive() || failover.isAlive(), "stuck");

        BsonDocument reply = passed.get();
        boolean claimsPrimary = reply.getBoolean("isWritablePrimary").getValue();
        assertEquals(claimsPrimary, reply.getString("me").equals(reply.getString("primary")), () -> "a hello that says"
                + " isWritablePrimary: " + claimsPrimary + " names " + reply.getString("primary").getValue() + " primary: " + reply.toJson());
        assertEquals(claimsPrimary, reply.containsKey("electionId"), () -> "a primary's election id, and only a primary's: " + reply.toJson());
        for (MemberAddress member : names) {
            assertEquals(set.isPrimary(member), states.of(member).role() == MemberState.Role.PRIMARY,
                    "the proxy's record of " + member + " after the failover");
        }
    }

    private static void awaitBlocked(Thread thread) throws InterruptedException {
        Await.until(Duration.ofSeconds(10), thread.getName() + " to wait for the member map", () -> thread.getState() == Thread.State.BLOCKED);
    }
}
