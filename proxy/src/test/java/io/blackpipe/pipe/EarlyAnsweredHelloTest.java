package io.blackpipe.pipe;

import static io.blackpipe.pipe.ScriptedProxy.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoNotPrimaryException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongodFrame;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.WireSocket;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * What follows an awaitable hello (one reply, no exhaustAllowed) that the proxy answered early
 * after an injected state-change error, as a server answers every waiting one: the member still
 * holds that hello until its own wait ends, and everything sent on the connection meanwhile would
 * queue behind it there.
 */
class EarlyAnsweredHelloTest {
    /** The member's wait for the first awaitable hello: every step before it ends takes far less. */
    private static final int MEMBER_WAIT_MILLIS = 8_000;

    /**
     * The real Java driver, as a tool that awaits hello itself (runCommand on its one pooled
     * connection), holds an awaitable hello; an injected NotWritablePrimary has the proxy answer it
     * early. The tool's next hello and isMaster on that connection, and an awaitable hello with the
     * older counter (a server answers it at once), are answered with the newer counter while the
     * member still holds the first: they did not wait behind it. Once the member
     * answers the first (the proxy drops that answer), the connection carries the next command and
     * hello to the member in step.
     */
    @Test
    void theNextHelloIsAnsweredWhileTheMemberStillHoldsTheOneAnsweredEarly() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             MongoClient tool = tool(proxy);
             MongoClient app = app(proxy)) {
            MongoDatabase admin = tool.getDatabase("admin");
            BsonDocument known = admin.runCommand(command("hello"), BsonDocument.class).getDocument("topologyVersion");
            long counter = known.getInt64("counter").getValue();
            CompletableFuture<BsonDocument> awaited = runAsync(admin, awaitable(known, MEMBER_WAIT_MILLIS));
            awaitTrue("the member holds the tool's awaitable hello", () -> oneReplyAwaitableHellos(scripted).size() == 1);
            ScriptedMongodFrame held = oneReplyAwaitableHellos(scripted).get(0);

            injectStateChangeError(proxy, app);
            BsonDocument early = awaited.get(ScriptedProxy.WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertEquals(counter + 2, counterOf(early), "the early answer: one newer than the error, the member as it still is");

            BsonDocument next = admin.runCommand(command("hello"), BsonDocument.class);
            BsonDocument legacy = admin.runCommand(command("isMaster"), BsonDocument.class);
            assertEquals(List.of(), answersTo(scripted, held), "the member still held the first hello when the next ones"
                    + " were answered: they did not wait behind it");
            assertEquals(counter + 2, counterOf(next), next::toJson);
            assertEquals(ScriptedProxy.advertised(proxy), next.getString("me").getValue());
            assertEquals(BsonBoolean.TRUE, next.get("isWritablePrimary"), "answered in hello's words");
            assertEquals(BsonBoolean.TRUE, legacy.get("ismaster"), "answered in isMaster's words");
            assertEquals(counter + 2, counterOf(legacy));
            BsonDocument stale = runAsync(admin, awaitable(known, 60_000)).get(ScriptedProxy.WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertEquals(counter + 2, counterOf(stale), "an awaitable hello with an older counter is answered at once");
            assertEquals(List.of(), answersTo(scripted, held));
            assertEquals(0, hellosAfter(scripted, held), "none reached the member");

            awaitTrue("the member answers the first hello when its wait ends", () -> answersTo(scripted, held).size() == 1);
            assertEquals(1.0, admin.runCommand(command("ping"), BsonDocument.class).getNumber("ok").doubleValue());
            BsonDocument after = admin.runCommand(command("hello"), BsonDocument.class);
            assertEquals(1, hellosAfter(scripted, held), "with the member free, the next hello reaches it");
            assertEquals(counter + 2, counterOf(after), "its own reply, shifted");
        }
    }

    /**
     * An awaitable hello sent after the early answer, knowing its counter, is one a server would
     * hold until its state changes: it waits at the proxy, not behind the member's wait. A further
     * injected state change answers it at once, with the counter after. The next one, with that
     * counter, waits until the member answers the hello it still holds, and gets that answer, the
     * member's latest word. None of them reached the member.
     */
    @Test
    void anAwaitableHelloWaitsAtTheProxyForAChangeOrForTheMembersLateAnswer() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             MongoClient tool = tool(proxy);
             MongoClient app = app(proxy)) {
            MongoDatabase admin = tool.getDatabase("admin");
            BsonDocument known = admin.runCommand(command("hello"), BsonDocument.class).getDocument("topologyVersion");
            long counter = known.getInt64("counter").getValue();
            CompletableFuture<BsonDocument> first = runAsync(admin, awaitable(known, MEMBER_WAIT_MILLIS));
            awaitTrue("the member holds the tool's awaitable hello", () -> oneReplyAwaitableHellos(scripted).size() == 1);
            ScriptedMongodFrame held = oneReplyAwaitableHellos(scripted).get(0);
            injectStateChangeError(proxy, app);
            BsonDocument early = first.get(ScriptedProxy.WAIT.toMillis(), TimeUnit.MILLISECONDS);

            // a server would hold this one for a minute, unless its state changes
            CompletableFuture<BsonDocument> second = runAsync(admin, awaitable(early.getDocument("topologyVersion"), 60_000));
            injectStateChangeError(proxy, app);
            BsonDocument changed = second.get(ScriptedProxy.WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertEquals(counter + 4, counterOf(changed), "answered at the next change, with its counter (two per change)");
            assertEquals(List.of(), answersTo(scripted, held), "while the member still held the first");

            BsonDocument latest = runAsync(admin, awaitable(changed.getDocument("topologyVersion"), 60_000))
                    .get(ScriptedProxy.WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertEquals(1, answersTo(scripted, held).size(), "answered once the member answered the first");
            assertEquals(counter + 4, counterOf(latest), "the member's answer, shifted");
            assertEquals(ScriptedProxy.advertised(proxy), latest.getString("me").getValue());
            assertEquals(0, hellosAfter(scripted, held), "none reached the member");

            admin.runCommand(command("hello"), BsonDocument.class);
            assertEquals(1, hellosAfter(scripted, held), "with the member free, the next hello reaches it");
        }
    }

    /**
     * The member really steps down while the tool's next awaitable hello waits at the proxy: the
     * member answers the hello it held at once, as a server does when its state changes, and that
     * answer reaches the tool at once, naming the member a secondary, long before the tool's own
     * wait (a minute) would end. The app here is a bare socket, so that the tool's are the only
     * hellos the proxy counts.
     */
    @Test
    void aRealStepDownReachesTheHelloWaitingAtTheProxyAtOnce() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             MongoClient tool = ScriptedProxy.client("mongodb://" + ScriptedProxy.advertised(proxy)
                     + "/?directConnection=true&maxPoolSize=1&serverMonitoringMode=poll&heartbeatFrequencyMS=60000", null);
             WireSocket app = new WireSocket(ScriptedProxy.port(proxy), 1_000, (int) ScriptedProxy.WAIT.toMillis());
             MongoClient direct = MongoClients.create(scripted.uri("directConnection=true"))) {
            MongoDatabase admin = tool.getDatabase("admin");
            BsonDocument known = admin.runCommand(command("hello"), BsonDocument.class).getDocument("topologyVersion");
            long counter = known.getInt64("counter").getValue();
            CompletableFuture<BsonDocument> first = runAsync(admin, awaitable(known, MEMBER_WAIT_MILLIS));
            awaitTrue("the member holds the tool's awaitable hello", () -> oneReplyAwaitableHellos(scripted).size() == 1);
            ScriptedMongodFrame held = oneReplyAwaitableHellos(scripted).get(0);
            proxy.rules().put(proxy.ruleParser().parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: {times: 1}, data: {failCommands: ['insert'], error: 'NotWritablePrimary'}}")));
            app.sendMsg(0, BsonDocument.parse("{insert: 'c', documents: [{_id: 1}], $db: 'test'}"));
            assertEquals(10107, ScriptedMongodWire.parseOpMsg(app.read()).body().getInt32("code").getValue());
            BsonDocument early = first.get(ScriptedProxy.WAIT.toMillis(), TimeUnit.MILLISECONDS);

            double hellos = Meters.sum(proxy.registry(), "blackpipe.monitoring.commands");
            CompletableFuture<BsonDocument> waiting = runAsync(admin, awaitable(early.getDocument("topologyVersion"), 60_000));
            awaitTrue("the proxy has the tool's next hello",
                    () -> Meters.sum(proxy.registry(), "blackpipe.monitoring.commands") > hellos);
            assertEquals(List.of(), answersTo(scripted, held), "the member still holds the first");
            direct.getDatabase("admin").runCommand(new BsonDocument("replSetStepDown", new BsonInt32(10)));

            BsonDocument stepped = waiting.get(ScriptedProxy.WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertEquals(BsonBoolean.FALSE, stepped.get("isWritablePrimary"), stepped::toJson);
            assertEquals(BsonBoolean.TRUE, stepped.get("secondary"));
            assertEquals(counter + 3, counterOf(stepped), "the member's new counter (+ 1), with the proxy's shift (+ 2)");
            assertEquals(1, answersTo(scripted, held).size(), "what released it: the member's answer to the first");
            assertEquals(0, hellosAfter(scripted, held), "it waited at the proxy, not at the member");
        }
    }

    /**
     * A pipelining client's request behind an awaitable hello the member holds: the answer the proxy
     * gives it (a rule's error) waits for the hello's answer, as behind a server's, and goes out with
     * the proxy's early answer, not when the member answers the hello at the end of its wait.
     */
    @Test
    void theProxysAnswerPipelinedBehindAnAwaitableHelloGoesWithItsEarlyAnswer() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = ScriptedProxy.wire(proxy);
             MongoClient app = app(proxy)) {
            raw.sendMsg(0, command("hello").append("$db", new BsonString("admin")));
            BsonDocument known = ScriptedMongodWire.parseOpMsg(raw.read()).body().getDocument("topologyVersion");
            proxy.rules().put(proxy.ruleParser().parse("fail-ping", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: 'alwaysOn', data: {failCommands: ['ping'], errorCode: 2}}")));
            ByteArrayOutputStream pipelined = new ByteArrayOutputStream();
            pipelined.write(ScriptedMongodWire.buildOpMsg(200, 0, 0,
                    awaitable(known, MEMBER_WAIT_MILLIS).append("$db", new BsonString("admin")), null));
            pipelined.write(ScriptedMongodWire.buildOpMsg(201, 0, 0, command("ping").append("$db", new BsonString("admin")), null));
            raw.sendRaw(pipelined.toByteArray());
            awaitTrue("the member holds the awaitable hello", () -> oneReplyAwaitableHellos(scripted).size() == 1);
            ScriptedMongodFrame held = oneReplyAwaitableHellos(scripted).get(0);
            raw.expectSilence(300); // the ping's error waits its turn

            injectStateChangeError(proxy, app);
            assertEquals(200, ScriptedMongodWire.responseTo(raw.read()), "the hello, answered early");
            byte[] ping = raw.read();
            assertEquals(201, ScriptedMongodWire.responseTo(ping));
            assertEquals(2, ScriptedMongodWire.parseOpMsg(ping).body().getInt32("code").getValue());
            assertEquals(List.of(), answersTo(scripted, held), "both before the member answered the hello");
        }
    }

    /** The tool: one connection straight to the member's listener, so its hellos queue as on one server connection. */
    private static MongoClient tool(ProxyServer proxy) {
        return ScriptedProxy.client("mongodb://" + ScriptedProxy.advertised(proxy)
                + "/?directConnection=true&maxPoolSize=1&serverMonitoringMode=poll", null);
    }

    /** The app whose insert meets the injected state-change error. */
    private static MongoClient app(ProxyServer proxy) {
        return ScriptedProxy.client(proxy.connectionString() + "&retryWrites=false&serverMonitoringMode=poll", null);
    }

    /** A NotWritablePrimary injected into an app's insert: the member's topologyVersion moves on, as in a real stepdown. */
    private static void injectStateChangeError(ProxyServer proxy, MongoClient app) throws Exception {
        proxy.rules().put(proxy.ruleParser().parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                + " mode: {times: 1}, data: {failCommands: ['insert'], error: 'NotWritablePrimary'}}")));
        assertThrows(MongoNotPrimaryException.class, () -> app.getDatabase("test").getCollection("c")
                .insertOne(new Document("_id", 1)));
    }

    private static CompletableFuture<BsonDocument> runAsync(MongoDatabase admin, BsonDocument command) {
        return CompletableFuture.supplyAsync(() -> admin.runCommand(command, BsonDocument.class));
    }

    private static BsonDocument awaitable(BsonDocument topologyVersion, int maxAwaitTimeMillis) {
        return command("hello").append("topologyVersion", topologyVersion)
                .append("maxAwaitTimeMS", new BsonInt64(maxAwaitTimeMillis));
    }

    private static BsonDocument command(String name) {
        return new BsonDocument(name, new BsonInt32(1));
    }

    private static long counterOf(BsonDocument hello) {
        return hello.getDocument("topologyVersion").getNumber("counter").longValue();
    }

    /** The awaitable hellos without exhaustAllowed the member received (the proxy's own probes say hello too). */
    static List<ScriptedMongodFrame> oneReplyAwaitableHellos(ScriptedMongod scripted) {
        return scripted.commandsReceived("hello").stream()
                .filter(f -> f.document().containsKey("maxAwaitTimeMS") && !f.exhaustAllowed()).toList();
    }

    /** The hellos (any name) the member received on the connection of {@code request}, after it. */
    private static int hellosAfter(ScriptedMongod scripted, ScriptedMongodFrame request) {
        return scripted.framesReceived(f -> f.connectionId() == request.connectionId() && f.requestId() > request.requestId()
                && ScriptedProxy.isHello(f.commandName())).size();
    }

    /** The member's replies to {@code request}. */
    static List<ScriptedMongodFrame> answersTo(ScriptedMongod scripted, ScriptedMongodFrame request) {
        return scripted.framesSent(f -> f.connectionId() == request.connectionId() && f.responseTo() == request.requestId());
    }
}
