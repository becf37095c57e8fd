package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.Await;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.topology.MemberAddress;
import java.net.ConnectException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A timed outage or blackhole ends on the fault-end thread, which takes the listener's lock. If its
 * time comes while another control operation holds that lock (a new fault beginning, a restore, the
 * proxy closing), cancelling it is too late: it is already waiting for the lock. When it gets the
 * lock it must end nothing, since the fault it was scheduled for is gone. Each test holds the
 * listener's lock (as that other operation does) until the end is waiting for it.
 */
class TimedFaultEndRaceTest {
    private ScriptedMongod upstream;
    private ProxyServer proxy;
    private MemberListener listener;

    @BeforeEach
    void start() throws Exception {
        upstream = ScriptedMongod.start();
        proxy = ScriptedProxy.start(upstream);
        listener = proxy.listener(ScriptedProxy.member(proxy).upstream());
    }

    @AfterEach
    void stop() {
        proxy.close();
        upstream.close();
    }

    @Test
    void aBlackholeUntilRestoredOutlivesTheEndOfTheTimedOneBeforeIt() throws Exception {
        synchronized (listener) {
            listener.blackhole(1);
            awaitFaultEndWaitingForTheListener();
            listener.blackhole(0); // until restored
        }
        awaitFaultEndIdle();
        assertTrue(listener.blackholed(), "the end of the earlier, timed blackhole ended the one until restored");
    }

    @Test
    void anOutageUntilRestoredOutlivesTheEndOfTheTimedOneBeforeIt() throws Exception {
        synchronized (listener) {
            listener.outage(1);
            awaitFaultEndWaitingForTheListener();
            listener.outage(0);
        }
        awaitFaultEndIdle();
        assertTrue(listener.down(), "the end of the earlier, timed outage ended the one until restored");
    }

    @Test
    void aLongerBlackholeIsNotCutShortByTheEndOfTheShorterOneItReplaced() throws Exception {
        synchronized (listener) {
            listener.blackhole(1);
            awaitFaultEndWaitingForTheListener();
            listener.blackhole(60_000);
        }
        awaitFaultEndIdle();
        assertTrue(listener.blackholed(), "the 1 ms blackhole's end cut the 60 s one short");
    }

    @Test
    void aTimedOutageThatEndsAsTheProxyClosesDoesNotListenAgain() throws Exception {
        synchronized (listener) {
            listener.outage(1);
            awaitFaultEndWaitingForTheListener();
            listener.close();
        }
        awaitFaultEndIdle();
        assertTrue(listener.down(), "the outage's end took the closed listener for a member back up");
        MemberAddress advertised = ScriptedProxy.member(proxy).advertised();
        assertThrows(ConnectException.class, () -> RawClient.connect(advertised).close(), "the closed listener's port accepts again");
    }

    private static void awaitFaultEndWaitingForTheListener() throws InterruptedException {
        Await.until(Duration.ofSeconds(10), "the fault's end to wait for the listener", () -> faultEndState() == Thread.State.BLOCKED);
    }

    /** The fault-end thread took the lock, did what it does and waits for its next task. */
    private static void awaitFaultEndIdle() throws InterruptedException {
        Await.until(Duration.ofSeconds(10), "the fault-end thread to be idle", () -> faultEndState() == Thread.State.WAITING
                || faultEndState() == Thread.State.TIMED_WAITING);
    }

    private static Thread.State faultEndState() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals("blackpipe-fault-end"))
                .map(Thread::getState).findFirst().orElse(Thread.State.NEW);
    }
}
