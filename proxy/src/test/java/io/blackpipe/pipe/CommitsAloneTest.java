package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodFrame;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.WireSocket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/**
 * jongodb 0.1.6 loses a write that lands while it commits a transaction (it copies the collections the
 * transaction wrote, merges, and puts the copies back): through the proxy, a commitTransaction reaches
 * such a member alone. Here a scripted member that names itself jongodb in buildInfo, whose replies to the
 * commits and writes are held a while after they ran, and raw connections, so the order in which the member
 * got each command is seen exactly. The race itself, on jongodb, is in ConcurrentCommitsDriverTest.
 */
class CommitsAloneTest {
    private static final String SAID = "is jongodb, whose transaction commit loses a write";
    private static final long HELD_MILLIS = 800;

    private static ScriptedMongod jongodbByName(String version) throws Exception {
        return ScriptedMongod.builder().withoutEndSessions().version(version).start();
    }

    private static BsonDocument commit() {
        return BsonDocument.parse("{commitTransaction: 1, txnNumber: {$numberLong: '1'}, autocommit: false, $db: 'admin'}")
                .append("lsid", new BsonDocument("id", new BsonBinary(UUID.randomUUID())));
    }

    private static BsonDocument insert(int id) {
        return BsonDocument.parse("{insert: 'c', documents: [{_id: " + id + "}], $db: 'shop'}");
    }

    private static BsonDocument update() {
        return BsonDocument.parse("{update: 'c', updates: [{q: {_id: 'day'}, u: {$inc: {n: 1}}, upsert: true}], $db: 'shop'}");
    }

    /** The member answers the next commit ok (it runs no transactions), as late as its held replies. */
    private static void scriptACommit(ScriptedMongod member) {
        member.failNext("commitTransaction", BsonDocument.parse("{ok: 1}"));
    }

    /** The app's commands, not the start's questions (which write in their own database). */
    private static boolean ofTheApp(ScriptedMongodFrame frame, String command) {
        return command.equals(frame.commandName()) && frame.document() != null
                && !frame.document().getString("$db", new BsonString("")).getValue().equals("blackpipe_probe");
    }

    private static long received(ScriptedMongod member, String command) throws InterruptedException {
        Await.until(Duration.ofSeconds(5), command + " at the member", () -> !member.framesReceived(f -> ofTheApp(f, command)).isEmpty());
        return member.framesReceived(f -> ofTheApp(f, command)).get(0).nanoTime();
    }

    /** When the member answered the app's {@code command}: its reply's frame names the command, not the database. */
    private static List<ScriptedMongodFrame> replies(ScriptedMongod member, String command) {
        List<Integer> asked = member.framesReceived(f -> ofTheApp(f, command)).stream().map(ScriptedMongodFrame::requestId).toList();
        return member.framesSent(f -> command.equals(f.commandName()) && asked.contains(f.responseTo()));
    }

    private static long answered(ScriptedMongod member, String command) {
        List<ScriptedMongodFrame> replies = replies(member, command);
        assertEquals(1, replies.size(), command + " answered once");
        return replies.get(0).nanoTime();
    }

    private static ProxyServer startNoted(ScriptedMongod member, LogCapture log) throws Exception {
        ProxyServer proxy = ScriptedProxy.start(member);
        log.await(m -> m.startsWith("member " + member.address() + " " + SAID), Duration.ofSeconds(5), "noting the member");
        return proxy;
    }

    @Test
    void aWriteSentWhileACommitRunsReachesTheMemberAfterTheCommitsReply() throws Exception {
        try (ScriptedMongod member = jongodbByName("8.0.0-jongodb");
             LogCapture log = LogCapture.start();
             ProxyServer proxy = startNoted(member, log)) {
            int port = proxy.members().get(0).advertised().port();
            scriptACommit(member);
            member.delayReplies("commitTransaction", HELD_MILLIS);
            try (WireSocket committer = new WireSocket(port, 1, 5_000);
                 WireSocket writer = new WireSocket(port, 100, 5_000)) {
                int commit = committer.sendMsg(0, commit());
                received(member, "commitTransaction");
                int write = writer.sendMsg(0, insert(1));
                writer.readOk(write);
                committer.readOk(commit);
            }
            assertTrue(received(member, "insert") > answered(member, "commitTransaction"), "the insert waited for the commit's reply");
            assertEquals(List.of(BsonDocument.parse("{_id: 1}")), member.documents("shop", "c"));
        }
    }

    @Test
    void aCommitWaitsForTheWritesAtTheMemberAndTheWritesSentMeanwhileWaitForIt() throws Exception {
        try (ScriptedMongod member = jongodbByName("8.0.0-jongodb");
             LogCapture log = LogCapture.start();
             ProxyServer proxy = startNoted(member, log)) {
            int port = proxy.members().get(0).advertised().port();
            scriptACommit(member);
            member.delayReplies("update", HELD_MILLIS);
            try (WireSocket updater = new WireSocket(port, 1, 5_000);
                 WireSocket committer = new WireSocket(port, 100, 5_000);
                 WireSocket writer = new WireSocket(port, 200, 5_000)) {
                int update = updater.sendMsg(0, update());
                received(member, "update");
                int commit = committer.sendMsg(0, commit());
                // the commit reached the proxy (counted as it arrives, then held behind the update) before the write is sent
                Await.until(Duration.ofSeconds(5), "the commit at the proxy", () -> Meters.attempts(proxy.registry(), "commitTransaction") == 1);
                int write = writer.sendMsg(0, insert(2)); // behind a waiting commit, a write waits too
                updater.readOk(update);
                committer.readOk(commit);
                writer.readOk(write);
            }
            long commitReceived = received(member, "commitTransaction");
            assertTrue(commitReceived > answered(member, "update"), "the commit waited for the update's reply");
            assertTrue(received(member, "insert") > commitReceived, "the insert went after the commit that waited before it");
            assertTrue(received(member, "insert") > answered(member, "commitTransaction"), "and after its reply");
        }
    }

    /** A commit whose client left while it waited holds no write off. */
    @Test
    void aCommitWhoseClientLeftWhileItWaitedHoldsNothingOff() throws Exception {
        try (ScriptedMongod member = jongodbByName("8.0.0-jongodb");
             LogCapture log = LogCapture.start();
             ProxyServer proxy = startNoted(member, log)) {
            int port = proxy.members().get(0).advertised().port();
            member.delayReplies("update", 3_000);
            try (WireSocket updater = new WireSocket(port, 1, 5_000)) {
                int update = updater.sendMsg(0, update());
                received(member, "update");
                try (WireSocket committer = new WireSocket(port, 100, 5_000)) {
                    committer.sendMsg(0, commit());
                    Thread.sleep(200); // waiting for the update
                } // its client leaves
                Thread.sleep(200);
                try (WireSocket writer = new WireSocket(port, 200, 5_000)) {
                    writer.readOk(writer.sendMsg(0, insert(3)));
                }
                assertEquals(List.of(), replies(member, "update"),
                        "the insert went and was answered while the update ran");
                updater.readOk(update);
            }
            assertEquals(List.of(), member.commandsReceived("commitTransaction"), "the commit given up never reached the member");
        }
    }

    /**
     * A commit waited on a simulated primary that a failover then stepped down: asking again there, it is refused as
     * a secondary refuses it, and holds no write off on the new primary.
     */
    @Test
    void aCommitThatWaitedOnAPrimaryASimulatedFailoverSteppedDownHoldsNothingOff() throws Exception {
        try (ScriptedMongod node = jongodbByName("8.0.0-jongodb");
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + node.address() + "/?replicaSet="
                     + ScriptedMongod.SET_NAME).withSimulatedMembers(3))) {
            log.await(m -> m.startsWith("the real node " + SAID), Duration.ofSeconds(5), "noting the node");
            node.delayReplies("update", HELD_MILLIS);
            try (WireSocket updater = new WireSocket(primaryPort(proxy), 1, 5_000);
                 WireSocket committer = new WireSocket(primaryPort(proxy), 100, 5_000)) {
                int update = updater.sendMsg(0, update());
                received(node, "update");
                int commit = committer.sendMsg(0, commit());
                Thread.sleep(200); // waiting for the update
                proxy.failover(0);
                byte[] answer = committer.read();
                assertEquals(commit, ScriptedMongodWire.responseTo(answer));
                BsonDocument refused = ScriptedMongodWire.parseOpMsg(answer).body();
                // refused as a secondary refuses it (this node lists no commitTransaction: CommandNotFound, looked up first)
                assertEquals(0.0, refused.getNumber("ok").doubleValue(), refused::toJson);
                updater.readOk(update);
            }
            try (WireSocket writer = new WireSocket(primaryPort(proxy), 200, 5_000)) {
                writer.readOk(writer.sendMsg(0, insert(4)));
            }
            assertEquals(List.of(), node.commandsReceived("commitTransaction"), "refused by the member it waited on, now a secondary");
        }
    }

    private static int primaryPort(ProxyServer proxy) {
        return proxy.select("primary").get(0).member().advertised().port();
    }

    /** A member that does not name jongodb gets its commits beside its writes, as mongod takes them. */
    @Test
    void aMemberNotNamedJongodbGetsCommitsBesideWrites() throws Exception {
        try (ScriptedMongod member = jongodbByName("7.0.0");
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member)) {
            log.await(m -> m.startsWith("member " + member.address() + " has no endSessions"), Duration.ofSeconds(5), "noting the member");
            int port = proxy.members().get(0).advertised().port();
            scriptACommit(member);
            member.delayReplies("update", HELD_MILLIS);
            try (WireSocket updater = new WireSocket(port, 1, 5_000);
                 WireSocket committer = new WireSocket(port, 100, 5_000)) {
                int update = updater.sendMsg(0, update());
                received(member, "update");
                committer.readOk(committer.sendMsg(0, commit()));
                assertEquals(List.of(), replies(member, "update"), "the commit went while the update ran");
                updater.readOk(update);
            }
            assertTrue(log.messages().stream().noneMatch(m -> m.contains(SAID)), () -> String.join("\n", log.messages()));
        }
    }
}
