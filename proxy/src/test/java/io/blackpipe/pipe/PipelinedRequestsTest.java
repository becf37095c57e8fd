package io.blackpipe.pipe;

import static io.blackpipe.pipe.ScriptedProxy.wire;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.WireSocket;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/**
 * A client may send its next request before the reply to the one before (pipelining): mongod reads
 * and answers them in turn. Each reply must be treated as the answer to its own request, and
 * the replies must reach the client in the order mongod would send them.
 */
class PipelinedRequestsTest {

    @Test
    void aPipelinedReplyNamingTheMembersIsRewrittenAndCountedAsItsOwn() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            raw.sendRaw(pipelined(command("replSetGetStatus"), command("ping")));

            byte[] status = raw.read();
            assertEquals(100, ScriptedMongodWire.responseTo(status));
            String name = ScriptedMongodWire.parseOpMsg(status).body().getArray("members").get(0).asDocument()
                    .getString("name").getValue();
            assertEquals(ScriptedProxy.advertised(proxy), name, "rs.status() names the proxy, pipelined or not");
            assertEquals(101, ScriptedMongodWire.responseTo(raw.read()));
            ScriptedProxy.awaitTrue("the first command's reply ends it as a success",
                    () -> Meters.outcomes(proxy.registry(), "replSetGetStatus", "ok") == 1);
        }
    }

    @Test
    void anInjectedErrorOnAPipelinedRequestComesAfterTheReplyToTheOneBefore() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            alwaysOn(proxy, "fail-ping", "{failCommands: ['ping'], errorCode: 2}");
            raw.sendRaw(pipelined(command("buildInfo"), command("ping")));

            assertEquals(100, ScriptedMongodWire.responseTo(raw.read()), "mongod answers pipelined requests in order");
            assertEquals(101, ScriptedMongodWire.responseTo(raw.read()));
        }
    }

    @Test
    void theProxysAnswerToAPipelinedConfigureFailPointComesAfterTheReplyToTheOneBefore() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            raw.sendRaw(pipelined(command("buildInfo"), configureOff()));

            assertEquals(100, ScriptedMongodWire.responseTo(raw.read()), "mongod answers pipelined requests in order");
            assertEquals(101, ScriptedMongodWire.responseTo(raw.read()));
        }
    }

    @Test
    void aRequestPipelinedBehindAWaitForFailPointWaitsForItsAnswer() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            BsonDocument wait = BsonDocument.parse("{waitForFailPoint: 'failCommand', timesEntered: 1, maxTimeMS: 500, $db: 'admin'}");
            raw.sendRaw(pipelined(wait, command("buildInfo")));

            byte[] first = raw.read();
            assertEquals(100, ScriptedMongodWire.responseTo(first), "the wait blocks its connection, as on mongod");
            assertEquals(50, ScriptedMongodWire.parseOpMsg(first).body().getInt32("code").getValue(), "MaxTimeMSExpired");
            assertEquals(101, ScriptedMongodWire.responseTo(raw.read()));
        }
    }

    @Test
    void anErrorARuleAnswersAPipelinedHelloWithComesAfterTheReplyToTheOneBefore() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            alwaysOn(proxy, "fail-hello", "{failCommands: ['hello'], errorCode: 91}");
            raw.sendRaw(pipelined(command("buildInfo"), command("hello")));

            assertEquals(100, ScriptedMongodWire.responseTo(raw.read()));
            byte[] hello = raw.read();
            assertEquals(101, ScriptedMongodWire.responseTo(hello));
            assertEquals(91, ScriptedMongodWire.parseOpMsg(hello).body().getInt32("code").getValue());
        }
    }

    @Test
    void anErrorOnARequestPipelinedBehindAForwardedHelloComesAfterTheHellosReply() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            alwaysOn(proxy, "fail-ping", "{failCommands: ['ping'], errorCode: 2}");
            raw.sendRaw(pipelined(command("hello"), command("ping"), command("hello"), configureOff()));

            byte[] hello = raw.read();
            assertEquals(100, ScriptedMongodWire.responseTo(hello), "mongod answers the hello first");
            assertEquals(ScriptedProxy.advertised(proxy), ScriptedMongodWire.parseOpMsg(hello).body().getString("me").getValue(),
                    "rewritten as any hello");
            assertEquals(101, ScriptedMongodWire.responseTo(raw.read()));
            assertEquals(102, ScriptedMongodWire.responseTo(raw.read()));
            assertEquals(103, ScriptedMongodWire.responseTo(raw.read()), "the proxy's own answer after the hello before it");
        }
    }

    @Test
    void anErrorOnARequestSentWhileTheReplyBeforeIsDelayedComesAfterThatReply() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            alwaysOn(proxy, "late-buildInfo", "{failCommands: ['buildInfo'], delayReplyMS: 1000}");
            alwaysOn(proxy, "fail-ping", "{failCommands: ['ping'], errorCode: 2}");
            raw.sendMsg(0, command("buildInfo"));
            ScriptedProxy.awaitTrue("the member answered buildInfo (its reply now held by the proxy)",
                    () -> scripted.framesSent(f -> f.responseTo() == 100).size() == 1);
            raw.sendMsg(0, command("ping"));

            assertEquals(100, ScriptedMongodWire.responseTo(raw.read()), "the delayed reply was on its way first");
            assertEquals(101, ScriptedMongodWire.responseTo(raw.read()));
        }
    }

    @Test
    void nothingSentBehindASwallowedRequestIsTakenAndTheCloseEndsThemAll() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            alwaysOn(proxy, "hang-ping", "{failCommands: ['ping'], hang: true}");
            try (WireSocket raw = wire(proxy)) {
                raw.sendRaw(pipelined(command("ping"), command("buildInfo")));
                raw.expectSilence(500); // a mongod stuck on the ping would not read the buildInfo
            }
            ScriptedProxy.awaitTrue("the close ends the swallowed request and the one behind it",
                    () -> Meters.outcomes(proxy.registry(), "ping", "network_error") == 1
                            && Meters.outcomes(proxy.registry(), "buildInfo", "network_error") == 1);
            assertEquals(1, Meters.attempts(proxy.registry(), "buildInfo"), "the driver sent it: an attempt");
            assertEquals(0, scripted.commandsReceived("buildInfo").size(), "never forwarded");
        }
    }

    @Test
    void aBlockedRequestGoesOnWhenItsBlockEndsThoughTheNextIsBlockedInTurn() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            alwaysOn(proxy, "block-ping", "{failCommands: ['ping'], blockConnection: true, blockTimeMS: 300}");
            alwaysOn(proxy, "block-buildInfo", "{failCommands: ['buildInfo'], blockConnection: true, blockTimeMS: 60000}");
            raw.sendRaw(pipelined(command("ping"), command("buildInfo")));

            ScriptedProxy.awaitTrue("the ping at the member once its own block ended, not the buildInfo's",
                    () -> scripted.commandsReceived("ping").size() == 1);
            assertEquals(100, ScriptedMongodWire.responseTo(raw.read()));
            assertEquals(0, scripted.commandsReceived("buildInfo").size(), "still blocked");
        }
    }

    @Test
    void aSwallowedRequestThatWasQueuedBehindABlockStillEndsWithTheClose() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            alwaysOn(proxy, "block-ping", "{failCommands: ['ping'], blockConnection: true, blockTimeMS: 300}");
            alwaysOn(proxy, "hang-buildInfo", "{failCommands: ['buildInfo'], hang: true}");
            try (WireSocket raw = wire(proxy)) {
                // the block pauses the client's reads once the second request queues behind it
                raw.sendRaw(pipelined(command("ping"), command("buildInfo"), command("isMaster")));
                assertEquals(100, ScriptedMongodWire.responseTo(raw.read()), "the ping, after its block");
                ScriptedProxy.awaitTrue("the buildInfo swallowed", () -> Meters.attempts(proxy.registry(), "buildInfo") == 1);
            }
            ScriptedProxy.awaitTrue("the close seen behind the hang, which ends it",
                    () -> Meters.outcomes(proxy.registry(), "buildInfo", "network_error") == 1);
        }
    }

    @Test
    void aRequestQueuedBehindABlockedOneIsAnAttemptTheResetEnds() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            alwaysOn(proxy, "block-ping", "{failCommands: ['ping'], blockConnection: true, blockTimeMS: 60000}");
            raw.sendRaw(pipelined(command("ping"), command("buildInfo")));
            ScriptedProxy.awaitTrue("the ping held", () -> Meters.attempts(proxy.registry(), "ping") == 1);
            raw.expectSilence(300); // the buildInfo queued behind it meanwhile
            proxy.select("all").forEach(MemberListener::resetConnections);

            raw.expectClosed();
            ScriptedProxy.awaitTrue("the reset ends the request that waited behind the block, as the one held",
                    () -> Meters.outcomes(proxy.registry(), "buildInfo", "network_error") == 1
                            && Meters.outcomes(proxy.registry(), "ping", "network_error") == 1);
            assertEquals(1, Meters.attempts(proxy.registry(), "buildInfo"), "the client sent it: an attempt");
            assertEquals(1, Meters.faults(proxy.registry(), "connectionsReset", "buildInfo"), "cut by the reset");
            assertEquals(0, scripted.commandsReceived("buildInfo").size(), "never forwarded");
        }
    }

    @Test
    void behindASwallowedRequestTheProxyReadsAboutWhatAServersBuffersWouldTakeThenStops() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            alwaysOn(proxy, "hang-ping", "{failCommands: ['ping'], hang: true}");
            int messages = 64;
            byte[] insert = ScriptedMongodWire.buildOpMsg(200, 0, 0, new BsonDocument("insert", new BsonString("c"))
                    .append("padding", new BsonString("x".repeat(1 << 20))).append("$db", new BsonString("test")), null);
            AtomicLong written = new AtomicLong();
            try (WireSocket raw = wire(proxy)) {
                raw.sendMsg(0, command("ping"));
                Thread writer = new Thread(() -> {
                    try {
                        for (int i = 0; i < messages; i++) {
                            raw.sendRaw(insert);
                            written.addAndGet(insert.length);
                        }
                    } catch (IOException closed) {
                        // the test closed the socket while the write was blocked
                    }
                });
                writer.start();
                ScriptedProxy.awaitTrue("the proxy reads on behind the swallowed ping, past what one held request allows",
                        () -> written.get() > WaitingRequests.MAX_BYTES_BEHIND_AN_OPEN_HOLD);
                Thread.sleep(2000);
                assertTrue(written.get() < (long) messages * insert.length,
                        "the proxy stopped reading: the client's writes block as against a stuck server (" + written.get() + " written)");
                raw.close();
                writer.join(ScriptedProxy.WAIT.toMillis());
            }
            assertEquals(0, scripted.commandsReceived("insert").size(), "nothing behind the hang reached the member");
        }
    }

    @Test
    void nothingSentBehindASwallowedHelloIsTaken() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            alwaysOn(proxy, "hang-hello", "{failCommands: ['hello'], hang: true}");
            raw.sendRaw(pipelined(command("hello"), command("ping")));
            raw.expectSilence(500);
            assertEquals(0, scripted.commandsReceived("ping").size());
        }
    }

    @Test
    void thePipeliningClientsCloseDuringABlackholeEndsItsRequestsAndNothingGoesOnAfterTheRestore() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            try (WireSocket raw = wire(proxy)) {
                proxy.blackhole("all", 0);
                raw.sendRaw(pipelined(command("buildInfo"), command("buildInfo")));
                raw.expectSilence(300);
            }
            ScriptedProxy.awaitTrue("the close seen during the blackhole ends both attempts",
                    () -> Meters.outcomes(proxy.registry(), "buildInfo", "network_error") == 2);
            proxy.restore("all");
            Thread.sleep(500);
            assertEquals(0, scripted.commandsReceived("buildInfo").size(), "the client gave up: nothing goes on after the restore");
        }
    }

    /**
     * An outage that begins while a held request's queue is resumed: the resume meets the member down
     * before the outage's reset reaches the connection. Every request the close ends is the outage's,
     * the ones still queued included (they were left unlabelled, as if no fault had cut them).
     */
    @Test
    void requestsAnOutageCutsWhileTheirQueueResumesAreAllTheOutages() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            MemberListener member = proxy.select("all").get(0);
            member.blackhole(0);
            raw.sendRaw(pipelined(command("buildInfo"), command("buildInfo"), command("buildInfo")));
            ScriptedProxy.awaitTrue("the first held by the blackhole", () -> Meters.attempts(proxy.registry(), "buildInfo") == 1);
            raw.expectSilence(300); // the other two queued behind it meanwhile

            // The connection's event loop waits while the blackhole's end is posted to it and the outage
            // begins, so it resumes the queue with the member down, before the outage's reset comes.
            CountDownLatch loopHeld = new CountDownLatch(1);
            member.connections().eventLoops().iterator().next().execute(() -> awaitQuietly(loopHeld));
            member.restore();
            Thread outage = new Thread(() -> {
                try {
                    member.outage(0);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            outage.start();
            ScriptedProxy.awaitTrue("the outage began", member::down);
            loopHeld.countDown();
            outage.join(ScriptedProxy.WAIT.toMillis());

            raw.expectClosed();
            ScriptedProxy.awaitTrue("the close ends all three",
                    () -> Meters.outcomes(proxy.registry(), "buildInfo", "network_error") == 3);
            assertEquals(3, Meters.faults(proxy.registry(), "outage", "buildInfo"), "each cut by the outage");
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(ScriptedProxy.WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A configureFailPoint answered at once holds nothing: answered while a held request's queue is
     * resumed, it must not resume that queue again inside itself (a malformed request behind it then
     * unwound through both and its frame was released twice; thousands of them overflowed the stack).
     */
    @Test
    void proxyAnsweredRequestsQueuedBehindAHoldAreAnsweredInTurnWithoutResumingInsideEachOther() throws Exception {
        int configures = 20_000;
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            BsonDocument[] commands = new BsonDocument[configures + 2];
            commands[0] = BsonDocument.parse("{waitForFailPoint: 'failCommand', timesEntered: 1, maxTimeMS: 300, $db: 'admin'}");
            java.util.Arrays.fill(commands, 1, configures + 1, configureOff());
            commands[configures + 1] = command("ping");
            byte[] all = pipelined(commands);
            Thread writer = new Thread(() -> {
                try {
                    raw.sendRaw(all);
                } catch (IOException closed) {
                    // the connection closed: the reads below say why
                }
            });
            writer.start();
            for (int i = 0; i < configures + 2; i++) {
                assertEquals(100 + i, ScriptedMongodWire.responseTo(raw.read()), "in turn");
            }
            writer.join();
        }
    }

    @Test
    void aMalformedRequestBehindAQueuedConfigureFailPointClosesTheConnectionAsMalformed() throws Exception {
        try (LogCapture log = LogCapture.start(); ScriptedMongod scripted = ScriptedMongod.start();
             ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            alwaysOn(proxy, "block-ping", "{failCommands: ['ping'], blockConnection: true, blockTimeMS: 200}");
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            all.write(pipelined(command("ping"), configureOff()));
            all.write(ScriptedMongodWire.buildOpMsg(102, 0, 1 << 2, command("ping"), null)); // an unknown required flag bit
            raw.sendRaw(all.toByteArray());

            raw.expectClosed();
            log.awaitContaining(ScriptedProxy.WAIT, "malformed message", "unknown required flag bits 0x4");
            assertTrue(log.messages().stream().noneMatch(line -> line.contains("unexpected error")), () -> String.join("\n", log.messages()));
        }
    }

    /** Puts a failCommand rule, alwaysOn, with {@code data}. */
    private static void alwaysOn(ProxyServer proxy, String id, String data) {
        proxy.rules().put(proxy.ruleParser().parse(id, BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: "
                + data + "}")));
    }

    private static BsonDocument configureOff() {
        return new BsonDocument("configureFailPoint", new BsonString("failCommand"))
                .append("mode", new BsonString("off")).append("$db", new BsonString("admin"));
    }

    private static BsonDocument command(String name) {
        return new BsonDocument(name, new BsonInt32(1)).append("$db", new BsonString("admin"));
    }

    /** The commands in one write, ids 100, 101, ...: each goes before the one before it is answered. */
    private static byte[] pipelined(BsonDocument... commands) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (int i = 0; i < commands.length; i++) {
            all.write(ScriptedMongodWire.buildOpMsg(100 + i, 0, 0, commands[i], null));
        }
        return all.toByteArray();
    }
}
