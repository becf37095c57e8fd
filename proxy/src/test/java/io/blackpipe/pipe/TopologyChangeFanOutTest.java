package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.WireSocket;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/**
 * A member's topologyVersion moving on (an injected state-change error) reaches every one of its
 * connections, at the cost of one event-loop task per loop rather than one per connection: a
 * faulted command on a member with many connections would otherwise post that many tasks.
 */
class TopologyChangeFanOutTest {
    private static final int MONITORS = 12;
    private static final int MEMBER_WAIT_MILLIS = 5_000;

    @Test
    void everyWaitingHelloIsAnsweredFromOneTaskPerEventLoop() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            List<WireSocket> monitors = new ArrayList<>();
            List<Integer> awaited = new ArrayList<>();
            try {
                for (int i = 0; i < MONITORS; i++) {
                    WireSocket monitor = new WireSocket(ScriptedProxy.port(proxy), 1, 10_000);
                    monitors.add(monitor);
                    monitor.sendMsg(0, new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin")));
                    BsonDocument known = ScriptedMongodWire.parseOpMsg(monitor.read()).body().getDocument("topologyVersion");
                    awaited.add(monitor.sendMsg(0, new BsonDocument("hello", new BsonInt32(1)).append("topologyVersion", known)
                            .append("maxAwaitTimeMS", new BsonInt64(MEMBER_WAIT_MILLIS)).append("$db", new BsonString("admin"))));
                }
                ScriptedProxy.awaitTrue("the member holds every awaitable hello",
                        () -> scripted.commandsReceived("hello").stream().filter(f -> f.document().containsKey("maxAwaitTimeMS"))
                                .count() == MONITORS);
                MemberListener listener = proxy.listener(ScriptedProxy.member(proxy).upstream());
                List<EventLoop> loops = List.copyOf(listener.connections().eventLoops());
                assertTrue(loops.size() < MONITORS, loops.size() + " event loops for " + MONITORS + " connections");

                // hold every loop, so that the tasks posted for the change can be counted before they run
                CountDownLatch held = new CountDownLatch(loops.size());
                CountDownLatch release = new CountDownLatch(1);
                for (EventLoop loop : loops) {
                    loop.execute(() -> {
                        held.countDown();
                        awaitQuietly(release);
                    });
                }
                assertTrue(held.await(10, TimeUnit.SECONDS), "every loop is held");
                long before = pendingTasks(loops);
                long start = System.nanoTime();
                listener.topologyChanged();
                long posted = pendingTasks(loops) - before;
                release.countDown();
                assertEquals(loops.size(), posted, "tasks posted for " + MONITORS + " connections on " + loops.size() + " loops");

                for (int i = 0; i < MONITORS; i++) {
                    byte[] answer = monitors.get(i).read();
                    assertEquals(awaited.get(i), ScriptedMongodWire.responseTo(answer), "monitor " + i);
                }
                long millis = (System.nanoTime() - start) / 1_000_000;
                assertTrue(millis < MEMBER_WAIT_MILLIS / 2, "all answered after " + millis + " ms: by the member's own wait");
                assertEquals(MONITORS, openConnectionsByLoop(listener, loops));
            } finally {
                for (WireSocket monitor : monitors) {
                    monitor.close();
                }
            }
            MemberListener listener = proxy.listener(ScriptedProxy.member(proxy).upstream());
            List<EventLoop> loops = List.copyOf(listener.connections().eventLoops());
            ScriptedProxy.awaitTrue("closed connections leave the loops' lists", () -> openConnectionsByLoop(listener, loops) == 0);
        }
    }

    /** The member's open connections, as each loop counts its own, on that loop. */
    private static int openConnectionsByLoop(MemberListener listener, List<EventLoop> loops) {
        int open = 0;
        for (EventLoop loop : loops) {
            open += loop.submit(() -> listener.connections().openOn(loop)).syncUninterruptibly().getNow();
        }
        return open;
    }

    private static long pendingTasks(List<EventLoop> loops) {
        return loops.stream().mapToLong(loop -> ((SingleThreadEventExecutor) loop).pendingTasks()).sum();
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
