package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.connection.ServerDescription;
import com.mongodb.connection.TopologyVersion;
import com.mongodb.event.ServerHeartbeatFailedEvent;
import com.mongodb.event.ServerHeartbeatSucceededEvent;
import com.mongodb.event.ServerMonitorListener;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.TcpTap;
import io.blackpipe.testing.WireSocket;
import io.blackpipe.topology.Member;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.bson.BsonDocument;

/**
 * Shared plumbing for the tests that drive the proxy in front of a {@link ScriptedMongod}:
 * starting the pair, reading frames recorded by a {@link TcpTap}, a heartbeat recorder and a bare
 * wire-protocol socket for the paths the Java driver never takes.
 */
final class ScriptedProxy {
    static final Duration WAIT = Duration.ofSeconds(15);

    private ScriptedProxy() {
    }

    /** The proxy in front of {@code scripted}, discovered as the replica set it claims to be. */
    static ProxyServer start(ScriptedMongod scripted) {
        return ProxyServer.start(ProxyConfig.embedded(scripted.uri("replicaSet=" + ScriptedMongod.SET_NAME)));
    }

    /** The only member a scripted single-node set has. */
    static Member member(ProxyServer proxy) {
        List<Member> members = proxy.members();
        assertEquals(1, members.size(), "a scripted set has one member: " + members);
        return members.get(0);
    }

    static String advertised(ProxyServer proxy) {
        return member(proxy).advertised().toString();
    }

    static int port(ProxyServer proxy) {
        return member(proxy).advertised().port();
    }

    /** A bare wire socket to the proxy's member, numbering its requests from 100. */
    static WireSocket wire(ProxyServer proxy) throws IOException {
        return new WireSocket(port(proxy), 100, (int) WAIT.toMillis());
    }

    static MongoClient client(String uri, ServerMonitorListener monitor) {
        MongoClientSettings.Builder settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(WAIT.toSeconds(), TimeUnit.SECONDS));
        if (monitor != null) {
            settings.applyToServerSettings(b -> b.addServerMonitorListener(monitor));
        }
        return MongoClients.create(settings.build());
    }

    /** The topologyVersion.counter the driver currently holds for its (only) server, or -1. */
    static long driverTopologyCounter(MongoClient client) {
        for (ServerDescription d : client.getClusterDescription().getServerDescriptions()) {
            TopologyVersion v = d.getTopologyVersion();
            if (v != null) {
                return v.getCounter();
            }
        }
        return -1;
    }

    static void awaitTrue(String what, BooleanSupplier condition) throws InterruptedException {
        awaitTrue(() -> what, condition);
    }

    /** As above; {@code what} is evaluated only on timeout, so it can describe the state then. */
    static void awaitTrue(Supplier<String> what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out after " + WAIT + " waiting for: " + what.get());
            }
            Thread.sleep(20);
        }
    }

    /** Records every successful heartbeat the driver's monitors report. */
    static final class Heartbeats implements ServerMonitorListener {
        final List<ServerHeartbeatSucceededEvent> events = new CopyOnWriteArrayList<>();
        final List<ServerHeartbeatFailedEvent> failures = new CopyOnWriteArrayList<>();

        @Override
        public void serverHeartbeatSucceeded(ServerHeartbeatSucceededEvent event) {
            events.add(event);
        }

        @Override
        public void serverHeartbeatFailed(ServerHeartbeatFailedEvent event) {
            failures.add(event);
        }

        List<ServerHeartbeatSucceededEvent> awaited() {
            return events.stream().filter(ServerHeartbeatSucceededEvent::isAwaited).toList();
        }
    }

    // ---------------------------------------------------------------- reading recorded frames

    static boolean isHello(String name) {
        return "hello".equals(name) || "isMaster".equals(name) || "ismaster".equals(name);
    }

    /** OP_MSG flagBits, OP_QUERY flags or OP_REPLY responseFlags. */
    static int flags(byte[] frame) {
        return ScriptedMongodWire.intLE(frame, ScriptedMongodWire.HEADER_SIZE);
    }

    /**
     * The OP_MSG body, the OP_QUERY query (unwrapped from $query) or the first OP_REPLY document;
     * null for anything else (OP_COMPRESSED).
     */
    static BsonDocument document(byte[] frame) {
        try {
            switch (ScriptedMongodWire.opCode(frame)) {
                case ScriptedMongodWire.OP_MSG:
                    return ScriptedMongodWire.parseOpMsg(frame).body();
                case ScriptedMongodWire.OP_QUERY: {
                    BsonDocument q = ScriptedMongodWire.parseOpQuery(frame).query();
                    return q.isDocument("$query") ? q.getDocument("$query") : q;
                }
                case ScriptedMongodWire.OP_REPLY:
                    return ScriptedMongodWire.parseOpReply(frame).documents().get(0);
                default:
                    return null;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("undecodable frame", e);
        }
    }

    /** The command name of a request frame (first key), or null. */
    static String commandName(byte[] frame) {
        BsonDocument doc = document(frame);
        return doc == null || doc.isEmpty() ? null : doc.getFirstKey();
    }

    static List<byte[]> clientFrames(TcpTap tap) {
        List<byte[]> all = new ArrayList<>();
        tap.recordings().forEach(r -> all.addAll(r.clientFrames()));
        return all;
    }

    static List<byte[]> serverFrames(TcpTap tap) {
        List<byte[]> all = new ArrayList<>();
        tap.recordings().forEach(r -> all.addAll(r.serverFrames()));
        return all;
    }

}
