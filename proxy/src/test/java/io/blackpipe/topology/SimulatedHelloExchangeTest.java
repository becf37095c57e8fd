package io.blackpipe.topology;

import static io.blackpipe.wire.WireFixtures.buf;
import static io.blackpipe.wire.WireFixtures.bytesOf;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static io.blackpipe.wire.WireFixtures.readLe32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.OpMsg;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The awaitable hellos of a simulated member's connection: the member's topologyVersion is its own
 * (a process of its own, a counter that elections move on), so the hello the client sends asks about
 * a version the real node never had, and the real node's answers say nothing of the member's role.
 */
class SimulatedHelloExchangeTest {
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;
    private static final MemberAddress REAL = MemberAddress.parse("db.internal:27017");
    private static final String REAL_VERSION = "{processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '6'}}";
    private static final String REAL_HELLO = "{isWritablePrimary: true, secondary: false, topologyVersion: " + REAL_VERSION
            + ", setName: 'rs0', hosts: ['db.internal:27017'], primary: 'db.internal:27017', me: 'db.internal:27017',"
            + " maxWireVersion: 21, ok: 1.0}";

    private final List<MemberAddress> names = SimulatedReplicaSet.names(REAL, 3);
    private final List<ByteBuf> owned = new ArrayList<>();
    private final MemberStates states = new MemberStates();
    private SimulatedReplicaSet set;
    /** The connection of the first member, primary until the election. */
    private HelloExchange exchange;

    @BeforeEach
    void setUp() {
        MemberMap addresses = new MemberMap("proxy.local", 40000, Map.of(), (upstream, port) -> port);
        names.forEach(addresses::ensure);
        set = new SimulatedReplicaSet("rs0", names, addresses, states, 1);
        set.observe(BsonDocument.parse(REAL_HELLO));
        exchange = new HelloExchange(new HelloRewriter(addresses, false, warning -> { }), states, names.get(0), set);
    }

    @AfterEach
    void releaseOwned() {
        owned.forEach(ReferenceCountUtil::release);
    }

    @Test
    void anAwaitableHelloAboutTheMembersVersionWaitsAtTheRealNodeAndAnElectionAnswersItAtOnce() {
        BsonDocument memberVersion = handshake();
        assertNotEquals(BsonDocument.parse(REAL_VERSION).get("processId"), memberVersion.get("processId"), "a process of its own");

        BsonDocument forwarded = body(send(71, awaitable(memberVersion)));
        assertEquals(BsonDocument.parse(REAL_VERSION), forwarded.getDocument("topologyVersion"),
                "the real node holds it as the member would: until its own state changes");

        set.failover(names.get(1));
        ByteBuf answer = own(exchange.answerAwaitingNow(ALLOC, 1001));
        assertEquals(71, readLe32(bytesOf(answer), 8), "answers the held hello now");
        BsonDocument told = body(answer);
        assertEquals(false, told.getBoolean("isWritablePrimary").getValue());
        assertEquals("proxy.local:40001", told.getString("primary").getValue());
        assertEquals(memberVersion.getNumber("counter").longValue() + 1, told.getDocument("topologyVersion").getNumber("counter").longValue());

        // the real node's own answer comes when its wait ends, still calling itself primary: dropped, and not the member's state
        assertNull(exchange.onReply(ALLOC, buf(opMsg(971, 71, 0).body(REAL_HELLO).build())));
        assertEquals(MemberState.Role.SECONDARY, states.of(names.get(0)).role());
    }

    @Test
    void anAwaitableHelloFromBeforeAnElectionIsMadeOneTheRealNodeAnswersAtOnce() {
        BsonDocument before = handshake();
        set.failover(names.get(1));
        BsonDocument asked = body(send(72, awaitable(before))).getDocument("topologyVersion");
        assertNotEquals(BsonDocument.parse(REAL_VERSION).get("processId"), asked.get("processId"),
                "a processId the real node never had: its answer comes at once, as the member's would");
        assertNotEquals(before.get("processId"), asked.get("processId"));
    }

    /**
     * mongod parses a hello before it looks at it: a topologyVersion without its counter, with one that is not a long,
     * or with a field of more, is refused. Such a hello goes to the real node as sent, so the node refuses it as the
     * member would, where making it one about a fresh process had it answered as a good one.
     */
    @Test
    void aMalformedVersionOfTheMembersGoesToTheRealNodeAsSentForItToRefuse() {
        BsonDocument memberVersion = handshake();
        for (BsonDocument malformed : List.of(new BsonDocument("processId", memberVersion.get("processId")),
                new BsonDocument("processId", memberVersion.get("processId")).append("counter", new BsonInt32(0)),
                memberVersion.clone().append("epoch", new BsonInt32(1)))) {
            assertEquals(malformed, body(send(73, awaitable(malformed))).getDocument("topologyVersion"), malformed.toJson());
        }
    }

    /** The handshake's hello and its answer; returns the member's topologyVersion it told. */
    private BsonDocument handshake() {
        ByteBuf request = send(70, "{hello: 1, $db: 'admin'}");
        assertEquals("hello", body(request).getFirstKey());
        ByteBuf reply = own(exchange.onReply(ALLOC, buf(opMsg(970, 70, 0).body(REAL_HELLO).build())));
        return body(reply).getDocument("topologyVersion");
    }

    private static String awaitable(BsonDocument version) {
        // extended JSON keeps the counter's type (a long, as drivers echo it)
        return "{hello: 1, topologyVersion: " + version.toJson(JsonWriterSettings.builder().outputMode(JsonMode.EXTENDED).build())
                + ", maxAwaitTimeMS: 10000, $db: 'admin'}";
    }

    private ByteBuf send(int requestId, String body) {
        ByteBuf frame = buf(opMsg(requestId, 0, 0).body(body).build());
        OpMsg msg = OpMsg.parse(frame);
        return own(exchange.onRequest(ALLOC, frame, CommandFacts.ofOpMsg(frame, msg), msg, null));
    }

    private ByteBuf own(ByteBuf made) {
        owned.add(made);
        return made;
    }

    private static BsonDocument body(ByteBuf frame) {
        OpMsg msg = OpMsg.parse(frame);
        return BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
    }
}
