package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.Restart;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.WireSocket;
import io.blackpipe.topology.Member;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A member blackpipe restarted is a new process (a new topologyVersion.processId, see MemberStates), over
 * a real set's member that holds an awaitable hello as mongod does. The new process's awaitable hellos
 * must reach the member with its own processId: named otherwise, the member answers at once, blackpipe
 * holds that early answer until the hello's wait ends, and a change of the member's state meanwhile (a
 * real election) reaches the client only then. jongodb answers every awaitable hello at once, so
 * MemberRestartDriverTest cannot tell; nor can a streaming driver here, as the member's stream goes on
 * from its first answer with the member's own processId: a client that awaits one reply at a time can.
 */
class RestartedProcessHelloTest {
    private ScriptedMongod primary;
    private ScriptedMongod secondary;
    private ScriptedMongod other;
    private ProxyServer proxy;

    @BeforeEach
    void start() throws Exception {
        primary = ScriptedMongod.start();
        secondary = ScriptedMongod.builder().secondary().primary(primary.address()).start();
        other = ScriptedMongod.builder().secondary().primary(primary.address()).start();
        for (ScriptedMongod member : List.of(primary, secondary, other)) {
            member.setAdvertisedHosts(List.of(primary.address(), secondary.address(), other.address()));
        }
        proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + primary.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME));
    }

    @AfterEach
    void stop() {
        proxy.close();
        for (ScriptedMongod member : List.of(primary, secondary, other)) {
            member.close();
        }
    }

    /** The proxy's member in front of the scripted secondary. */
    private Member restarting() {
        return proxy.members().stream().filter(m -> m.upstream().toString().equals(secondary.address())).findFirst().orElseThrow();
    }

    @Test
    void theOldProcesssAwaitableHelloIsAnsweredAtOnceAndTheNewOnesIsHeldByTheMember() throws Exception {
        Member member = restarting();
        BsonDocument before;
        try (WireSocket socket = new WireSocket(member.advertised().port(), 1, 30_000)) {
            before = topologyVersion(socket);
        }
        restartAndAwaitTheNewProcess(member, before);

        try (WireSocket socket = new WireSocket(member.advertised().port(), 1, 10_000)) {
            BsonDocument after = topologyVersion(socket);
            assertNotEquals(before.getObjectId("processId"), after.getObjectId("processId"), "a new process after the restart");

            // The old process's, the same counter as the member's now: the member would hold it as its own, so it must not see its own.
            long sent = System.nanoTime();
            BsonDocument atOnce = socket.readOk(socket.sendMsg(0, awaitable(before, 60_000))); // within the socket's 10 s
            long atOnceMillis = (System.nanoTime() - sent) / 1_000_000;
            assertTrue(atOnceMillis < 5_000, "the old process's awaitable hello held " + atOnceMillis + " ms");
            assertEquals(after, atOnce.getDocument("topologyVersion"), atOnce::toJson);

            int held = socket.sendMsg(0, awaitable(after, 60_000));
            socket.expectSilence(1_000);
            secondary.bumpTopologyVersion(); // the member's state changes: its held hello answers
            BsonDocument changed = socket.readOk(held); // within the socket's 10 s, not the hello's 60 s
            assertEquals(after.getObjectId("processId"), changed.getDocument("topologyVersion").getObjectId("processId"), changed::toJson);
            assertEquals(after.getInt64("counter").getValue() + 1, changed.getDocument("topologyVersion").getInt64("counter").getValue(),
                    changed::toJson);
        }
    }

    private void restartAndAwaitTheNewProcess(Member member, BsonDocument before) throws Exception {
        proxy.restart(member.advertised().toString(), new Restart(200, 300));
        Await.until(Duration.ofSeconds(10), () -> member.advertised() + " back as a new process", () -> {
            try (WireSocket socket = new WireSocket(member.advertised().port(), 1, 5_000)) {
                socket.sendMsg(0, hello());
                BsonDocument now = ScriptedMongodWire.parseOpMsg(socket.read()).body(); // ShutdownInProgress while it quiesces
                return now.getNumber("ok").intValue() == 1
                        && !now.getDocument("topologyVersion").getObjectId("processId").equals(before.getObjectId("processId"));
            } catch (Exception | AssertionError down) { // refused, or closed as the member exits (WireSocket asserts a reply)
                return false;
            }
        });
    }

    private static BsonDocument hello() {
        return new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin"));
    }

    private static BsonDocument awaitable(BsonDocument known, long maxAwaitMillis) {
        return hello().append("topologyVersion", known).append("maxAwaitTimeMS", new BsonInt64(maxAwaitMillis));
    }

    /** The member's topologyVersion, from a plain hello on the socket. */
    private static BsonDocument topologyVersion(WireSocket socket) throws Exception {
        BsonDocument hello = socket.readOk(socket.sendMsg(0, hello()));
        return hello.getDocument("topologyVersion");
    }
}
