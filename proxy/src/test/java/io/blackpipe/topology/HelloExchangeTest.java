package io.blackpipe.topology;

import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.buf;
import static io.blackpipe.wire.WireFixtures.bytesOf;
import static io.blackpipe.wire.WireFixtures.crc32c;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static io.blackpipe.wire.WireFixtures.opQuery;
import static io.blackpipe.wire.WireFixtures.opReply;
import static io.blackpipe.wire.WireFixtures.readLe32;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.OpQuery;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class HelloExchangeTest {
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;
    private static final MemberAddress MEMBER = MemberAddress.parse("a:27017");

    /** A hello reply of member a, as the real member sends it. */
    private static final String REAL_REPLY = "{isWritablePrimary: true,"
            + " topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '6'}},"
            + " hosts: ['a:27017', 'b:27017'], setName: 'rs0', primary: 'a:27017', me: 'a:27017',"
            + " maxWireVersion: 21, ok: 1.0}";
    /** The same reply naming the proxy's listeners (a -> 40000, b -> 40001). */
    private static final String PROXIED_REPLY = "{isWritablePrimary: true,"
            + " topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '6'}},"
            + " hosts: ['proxy.local:40000', 'proxy.local:40001'], setName: 'rs0', primary: 'proxy.local:40000',"
            + " me: 'proxy.local:40000', maxWireVersion: 21, ok: 1.0}";

    private final List<String> warnings = new ArrayList<>();
    /** Every buffer the test still owns; released after each test. */
    private final List<ByteBuf> owned = new ArrayList<>();
    private MemberStates states;
    private HelloExchange exchange;

    @BeforeEach
    void setUp() {
        MemberMap members = new MemberMap("proxy.local", 40000, Map.of(), (upstream, port) -> port);
        members.ensure(MEMBER);
        members.ensure(MemberAddress.parse("b:27017"));
        states = new MemberStates();
        exchange = new HelloExchange(new HelloRewriter(members, true, warnings::add), states, MEMBER);
    }

    @AfterEach
    void releaseOwned() {
        // Each buffer the test owns is released exactly once. (Checking refCnt() instead would be
        // wrong: a released pooled buffer is recycled and may show the count of its next user.)
        for (ByteBuf b : owned) {
            ReferenceCountUtil.release(b);
        }
    }

    /**
     * Hands {@code in} to one exchange step and takes ownership of what comes back: the same buffer,
     * or a new one (the exchange has then released {@code in}).
     */
    private ByteBuf pass(ByteBuf in, java.util.function.UnaryOperator<ByteBuf> step) {
        ByteBuf out;
        try {
            out = step.apply(in);
        } catch (RuntimeException | Error e) {
            ReferenceCountUtil.release(in);
            throw e;
        }
        owned.add(out);
        return out;
    }

    /** Takes ownership of a buffer the exchange made. */
    private ByteBuf own(ByteBuf made) {
        owned.add(made);
        return made;
    }

    /** Passes an OP_MSG request through the exchange as the client connection does. */
    private ByteBuf sendMsg(byte[] request) {
        return pass(buf(request), frame -> {
            OpMsg msg = OpMsg.parse(frame);
            return exchange.onRequest(ALLOC, frame, CommandFacts.ofOpMsg(frame, msg), msg, null);
        });
    }

    private ByteBuf sendQuery(byte[] request) {
        return pass(buf(request), frame -> {
            OpQuery query = OpQuery.parse(frame);
            return exchange.onRequest(ALLOC, frame, CommandFacts.ofOpQuery(frame, query), null, query);
        });
    }

    private ByteBuf reply(byte[] replyBytes) {
        return pass(buf(replyBytes), frame -> exchange.onReply(ALLOC, frame));
    }

    /** A reply arrives; asserts it is passed on as the very same, untouched buffer. */
    private void assertPassesUntouched(byte[] replyBytes) {
        ByteBuf[] in = new ByteBuf[1];
        ByteBuf out = pass(buf(replyBytes), frame -> exchange.onReply(ALLOC, in[0] = frame));
        assertSame(in[0], out);
        assertEquals(1, out.refCnt());
        assertArrayEquals(replyBytes, bytesOf(out));
    }

    /** A reply arrives; asserts it is replaced by exactly {@code expected} and the original released. */
    private void assertRewrittenTo(byte[] replyBytes, byte[] expected) {
        ByteBuf[] in = new ByteBuf[1];
        ByteBuf out = pass(buf(replyBytes), frame -> exchange.onReply(ALLOC, in[0] = frame));
        assertNotSame(in[0], out);
        assertEquals(0, in[0].refCnt(), "the original reply is released");
        assertArrayEquals(expected, bytesOf(out));
    }

    @Test
    void onlyTheReplyToARememberedHelloIsRewritten() {
        byte[] find = opMsg(1, 0, 0).body("{find: 'c', $db: 'd'}").build();
        assertArrayEquals(find, bytesOf(sendMsg(find)));
        assertFalse(exchange.expectsReplies(), "a find is not remembered");

        byte[] hello = opMsg(2, 0, 0).body("{hello: 1, $db: 'admin'}").build();
        ByteBuf forwarded = sendMsg(hello);
        assertArrayEquals(hello, bytesOf(forwarded), "a hello without compressors is forwarded as is");
        assertTrue(exchange.expectsReplies());

        // a reply to the find that happens to look like a hello reply is not touched
        assertPassesUntouched(opMsg(100, 1, 0).body(REAL_REPLY).build());
        // nor is a reply to a request id never seen
        assertPassesUntouched(opMsg(101, 3, 0).body(REAL_REPLY).build());
        assertTrue(exchange.expectsReplies());

        assertRewrittenTo(opMsg(102, 2, 0).body(REAL_REPLY).build(), opMsg(102, 2, 0).body(PROXIED_REPLY).build());
        assertFalse(exchange.expectsReplies());

        // a second reply to the same request is not expected any more
        assertPassesUntouched(opMsg(103, 2, 0).body(REAL_REPLY).build());
        assertTrue(warnings.isEmpty(), warnings.toString());
    }

    @Test
    void nonHelloReplyPassesAsTheSameBufferWhileAHelloIsPending() {
        sendMsg(opMsg(5, 0, 0).body("{hello: 1, $db: 'admin'}").build());
        sendMsg(opMsg(6, 0, 0).body("{insert: 'c', $db: 'd'}").sequence("documents", bson("{_id: 1}")).build());
        assertPassesUntouched(opMsg(200, 6, OpMsg.CHECKSUM_PRESENT).body("{n: 1, ok: 1.0}").build());
        assertTrue(exchange.expectsReplies(), "still waiting for the hello's reply");
    }

    @Test
    void rewrittenReplyKeepsIdsAndFlagsAndRecomputesTheChecksum() {
        sendMsg(opMsg(7, 0, 0).body("{isMaster: 1, $db: 'admin'}").build());
        byte[] real = opMsg(300, 7, OpMsg.CHECKSUM_PRESENT).body(REAL_REPLY).build();
        byte[] expected = opMsg(300, 7, OpMsg.CHECKSUM_PRESENT).body(PROXIED_REPLY).build();
        assertEquals(crc32c(expected, 0, expected.length - 4), readLe32(expected, expected.length - 4));
        assertRewrittenTo(real, expected);
    }

    @Test
    void streamedMoreToComeRepliesAreFollowedAndRewritten() {
        sendMsg(opMsg(20, 0, OpMsg.EXHAUST_ALLOWED)
                .body("{hello: 1, topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '6'}},"
                        + " maxAwaitTimeMS: 10000, $db: 'admin'}")
                .build());
        int more = OpMsg.MORE_TO_COME;
        assertRewrittenTo(opMsg(500, 20, more).body(REAL_REPLY).build(), opMsg(500, 20, more).body(PROXIED_REPLY).build());
        assertTrue(exchange.expectsReplies(), "a moreToCome reply announces another");
        // each streamed reply answers the previous reply's requestID
        assertRewrittenTo(opMsg(501, 500, more | OpMsg.CHECKSUM_PRESENT).body(REAL_REPLY).build(),
                opMsg(501, 500, more | OpMsg.CHECKSUM_PRESENT).body(PROXIED_REPLY).build());
        assertTrue(exchange.expectsReplies());
        // an unrelated reply in between is not taken for the stream
        assertPassesUntouched(opMsg(900, 20, 0).body(REAL_REPLY).build());
        // the last reply of the stream has no moreToCome
        assertRewrittenTo(opMsg(502, 501, 0).body(REAL_REPLY).build(), opMsg(502, 501, 0).body(PROXIED_REPLY).build());
        assertFalse(exchange.expectsReplies());
        assertPassesUntouched(opMsg(503, 502, 0).body(REAL_REPLY).build());
    }

    /**
     * Two awaitable hellos without exhaustAllowed, each answered by the proxy before the member's
     * wait ends (two topologyVersion shifts in a row): both of the member's late answers are
     * dropped, in whatever order they come, and the next hello's reply passes as usual.
     */
    @Test
    void theMembersLateAnswersToAwaitableHellosAnsweredEarlyAreDropped() {
        String awaitable = "{hello: 1, topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '6'}},"
                + " maxAwaitTimeMS: 10000, $db: 'admin'}";
        sendMsg(opMsg(70, 0, 0).body("{hello: 1, $db: 'admin'}").build());
        reply(opMsg(970, 70, 0).body(REAL_REPLY).build());
        assertNull(exchange.answerAwaitingNow(ALLOC, 1), "no hello waits");

        sendMsg(opMsg(71, 0, 0).body(awaitable).build());
        states.topologyVersion(MEMBER, true);
        ByteBuf first = own(exchange.answerAwaitingNow(ALLOC, 1001));
        assertEquals(71, readLe32(bytesOf(first), 8), "answers the held hello");
        assertEquals(0, OpMsg.parse(first).flags() & OpMsg.MORE_TO_COME, "one reply, as asked");
        assertEquals(8, counterOf(first), "the member's 6, and two: the error's step, and the member as it still is");
        assertNull(exchange.answerAwaitingNow(ALLOC, 1002), "answered once");

        sendMsg(opMsg(72, 0, 0).body(awaitable.replace("'6'", "'8'")).build());
        states.topologyVersion(MEMBER, true);
        ByteBuf second = own(exchange.answerAwaitingNow(ALLOC, 1003));
        assertEquals(72, readLe32(bytesOf(second), 8));
        assertEquals(10, counterOf(second));

        ByteBuf[] late = new ByteBuf[2];
        assertNull(pass(buf(opMsg(972, 72, 0).body(REAL_REPLY).build()), frame -> exchange.onReply(ALLOC, late[0] = frame)));
        assertNull(pass(buf(opMsg(971, 71, 0).body(REAL_REPLY).build()), frame -> exchange.onReply(ALLOC, late[1] = frame)));
        assertEquals(0, late[0].refCnt() + late[1].refCnt(), "dropped and released");
        assertFalse(exchange.expectsReplies());

        sendMsg(opMsg(73, 0, 0).body("{hello: 1, $db: 'admin'}").build());
        assertEquals(10, counterOf(reply(opMsg(973, 73, 0).body(REAL_REPLY).build())), "the next reply passes, shifted");
    }

    /**
     * An awaitable hello whose counter, less the shift, is below anything the member said (the
     * member's counter is 0 and the client knows the first of two shifts): the client is behind, and
     * a server answers such a hello at once. Forwarded with counter 0, the member would hold it as
     * current; forwarded with a processId the member never had, it answers at once.
     */
    @Test
    void anAwaitableHelloFromBeforeTheLastShiftIsOneTheMemberAnswersAtOnce() {
        sendMsg(opMsg(80, 0, 0).body("{hello: 1, $db: 'admin'}").build());
        reply(opMsg(980, 80, 0).body(REAL_REPLY.replace("'6'", "'0'")).build());
        states.topologyVersion(MEMBER, true);
        states.topologyVersion(MEMBER, true);
        ByteBuf forwarded = sendMsg(opMsg(81, 0, 0).body("{hello: 1, topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'},"
                + " counter: {$numberLong: '2'}}, maxAwaitTimeMS: 10000, $db: 'admin'}").build()); // the member's 0 after the first shift
        OpMsg msg = OpMsg.parse(forwarded);
        BsonDocument asked = BsonIo.decode(forwarded, msg.bodyOffset(), msg.sectionsEnd()).getDocument("topologyVersion");
        assertFalse(asked.getObjectId("processId").getValue().toHexString().equals("0102030405060708090a0b0c"), asked.toJson());
    }

    /**
     * While the member holds an awaitable hello answered early, the hellos after it are answered in
     * its place: a plain one at once, in its command's words; an awaitable one knowing the counter
     * waits until a change, or until the member's late answer, which then answers it (under the
     * late reply's id, which the client never saw) instead of being dropped.
     */
    @Test
    void whileTheMemberHoldsAnAnsweredHelloTheNextOnesAreAnsweredInItsPlace() {
        String awaitable = "{hello: 1, topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '6'}},"
                + " maxAwaitTimeMS: 10000, $db: 'admin'}";
        sendMsg(opMsg(80, 0, 0).body("{hello: 1, $db: 'admin'}").build());
        reply(opMsg(980, 80, 0).body(REAL_REPLY).build());
        assertFalse(exchange.memberHoldsAnsweredHello());
        sendMsg(opMsg(81, 0, 0).body(awaitable).build());
        states.topologyVersion(MEMBER, true);
        own(exchange.answerAwaitingNow(ALLOC, 1001));
        assertTrue(exchange.memberHoldsAnsweredHello());

        String isMaster = "{isMaster: 1, $db: 'admin'}";
        ByteBuf plain = own(exchange.standIn(ALLOC, BsonDocument.parse(isMaster), facts(82, isMaster), 1002));
        assertEquals(82, readLe32(bytesOf(plain), 8));
        assertEquals(1002, readLe32(bytesOf(plain), 4));
        assertEquals(8, counterOf(plain));
        assertTrue(body(plain).getBoolean("ismaster").getValue(), "in isMaster's words");

        String knowing = awaitable.replace("'6'", "'8'");
        assertNull(exchange.standIn(ALLOC, BsonDocument.parse(knowing), facts(83, knowing), 1003), "it knows the counter: it waits");
        assertNull(exchange.answerWaitedHere(ALLOC, 1004, 82), "no other hello waits");
        states.topologyVersion(MEMBER, true);
        ByteBuf changed = own(exchange.answerAwaitingNow(ALLOC, 1005));
        assertEquals(83, readLe32(bytesOf(changed), 8));
        assertEquals(10, counterOf(changed));
        assertNull(exchange.answerWaitedHere(ALLOC, 1006, 83), "answered once");

        String knowingNow = awaitable.replace("'6'", "'10'");
        assertNull(exchange.standIn(ALLOC, BsonDocument.parse(knowingNow), facts(84, knowingNow), 1007));
        ByteBuf late = buf(opMsg(981, 81, 0).body(REAL_REPLY.replace("'6'", "'9'")).build());
        ByteBuf answer = pass(late, frame -> exchange.onReply(ALLOC, frame));
        assertEquals(0, late.refCnt(), "the member's late reply is released");
        assertEquals(84, readLe32(bytesOf(answer), 8), "the hello that waited gets the member's latest word");
        assertEquals(981, readLe32(bytesOf(answer), 4));
        assertEquals(13, counterOf(answer), "the member's new counter (9), shifted (4)");
        assertFalse(exchange.memberHoldsAnsweredHello());
        assertFalse(exchange.expectsReplies());
    }

    /**
     * An answer made from the member's last hello gives the member's time now, not when it last
     * spoke: its localTime moved on by the time since, on the member's clock (here a year behind the
     * proxy's, which must not leak in).
     */
    @Test
    void anAnswerInTheMembersPlaceGivesItsLocalTimeNow() throws InterruptedException {
        long memberClock = System.currentTimeMillis() - 365L * 24 * 3600 * 1000;
        String withTime = REAL_REPLY.replace("ok: 1.0", "localTime: {$date: " + memberClock + "}, ok: 1.0");
        String awaitable = "{hello: 1, topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '6'}},"
                + " maxAwaitTimeMS: 10000, $db: 'admin'}";
        sendMsg(opMsg(90, 0, 0).body("{hello: 1, $db: 'admin'}").build());
        reply(opMsg(990, 90, 0).body(withTime).build());
        sendMsg(opMsg(91, 0, 0).body(awaitable).build());
        Thread.sleep(200);
        states.topologyVersion(MEMBER, true);

        long localTime = body(own(exchange.answerAwaitingNow(ALLOC, 1001))).getDateTime("localTime").getValue();
        assertTrue(localTime >= memberClock + 200, "moved on by the wait: " + (localTime - memberClock) + " ms");
        assertTrue(localTime < memberClock + 60_000, "on the member's clock, not the proxy's: " + (localTime - memberClock) + " ms");
    }

    private static CommandFacts facts(int requestId, String body) {
        ByteBuf frame = buf(opMsg(requestId, 0, 0).body(body).build());
        try {
            return CommandFacts.ofOpMsg(frame, OpMsg.parse(frame));
        } finally {
            frame.release();
        }
    }

    private static BsonDocument body(ByteBuf reply) {
        OpMsg msg = OpMsg.parse(reply);
        return BsonIo.decode(reply, msg.bodyOffset(), msg.sectionsEnd());
    }

    private static long counterOf(ByteBuf reply) {
        OpMsg msg = OpMsg.parse(reply);
        return BsonIo.decode(reply, msg.bodyOffset(), msg.sectionsEnd()).getDocument("topologyVersion")
                .getInt64("counter").getValue();
    }

    /**
     * A member that answers an awaitable hello at once with what its client knew (jongodb) is held
     * as a server holds it; one that answers a streamed hello asking about an older version ends the
     * stream (jongodb's one reply, no moreToCome): it goes at once with moreToCome, and the stream
     * goes on from here, its next reply a wait later, answering the last.
     */
    @Test
    void aRealMembersEarlyAnswerIsHeldAndAStreamItEndsGoesOnHere() {
        String knows = "{hello: 1, topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '6'}},"
                + " maxAwaitTimeMS: 10000, $db: 'admin'}";
        sendMsg(opMsg(90, 0, 0).body(knows).build());
        assertNull(reply(opMsg(990, 90, 0).body(REAL_REPLY).build()), "held: it says only what the client knew");
        HelloExchange.Held held = exchange.takeHeld();
        assertEquals(90, held.requestId());
        assertTrue(held.millis() > 9_000 && held.millis() <= 10_000, "the rest of the wait: " + held.millis());
        assertFalse(exchange.makesAStreamedCheck(90), "one reply, no stream: its answer is no check of a rule's");
        ByteBuf answer = own(exchange.answerWaitedHere(ALLOC, 1001, 90));
        assertEquals(90, readLe32(bytesOf(answer), 8));
        assertEquals(6, counterOf(answer));

        String older = knows.replace("'6'", "'5'");
        sendMsg(opMsg(91, 0, OpMsg.EXHAUST_ALLOWED).body(older).build());
        ByteBuf now = reply(opMsg(991, 91, 0).body(REAL_REPLY).build());
        assertEquals(91, readLe32(bytesOf(now), 8), "at once: the client knew an older version");
        assertEquals(991, readLe32(bytesOf(now), 4));
        assertEquals(OpMsg.MORE_TO_COME, OpMsg.parse(now).flags() & OpMsg.MORE_TO_COME, "a stream's first reply says more is to come");
        assertEquals("proxy.local:40000", body(now).getString("me").getValue());
        HelloExchange.Held next = exchange.takeHeld();
        assertEquals(991, next.requestId(), "the stream's next answers that reply");
        assertEquals(10_000, next.millis());
        assertTrue(exchange.makesAStreamedCheck(991), "the stream's next reply after its first is a check of its own");
        ByteBuf streamed = own(exchange.answerWaitedHere(ALLOC, 1002, 991));
        assertFalse(exchange.makesAStreamedCheck(991), "a wait an answer overtook owes no check (its timer fires late)");
        assertTrue(exchange.makesAStreamedCheck(1002));
        assertEquals(991, readLe32(bytesOf(streamed), 8));
        assertEquals(OpMsg.MORE_TO_COME, OpMsg.parse(streamed).flags() & OpMsg.MORE_TO_COME);
        assertFalse(exchange.expectsReplies());
    }

    /**
     * A member that quiesces answers the hello that waits with its error at once, whatever waits: the member's own
     * stream (a mongod's), which the error ends (what the member streams after it is dropped), a one-reply
     * awaitable hello at the member (its late answer dropped), or a stream going on here (jongodb's).
     */
    @Test
    void aQuiescingMemberAnswersTheWaitingHelloWithItsErrorAndDropsWhatFollows() {
        String knows = "{hello: 1, topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '6'}},"
                + " maxAwaitTimeMS: 10000, $db: 'admin'}";
        BsonDocument error = BsonDocument.parse("{ok: 0, errmsg: 'quiesce', code: 91, codeName: 'ShutdownInProgress'}");
        assertNull(exchange.answerAwaitingWithError(ALLOC, 1000, error), "no hello waits");

        sendMsg(opMsg(100, 0, OpMsg.EXHAUST_ALLOWED).body(knows).build()); // the member streams
        reply(opMsg(600, 100, OpMsg.MORE_TO_COME).body(REAL_REPLY).build());
        ByteBuf ended = own(exchange.answerAwaitingWithError(ALLOC, 1001, error));
        assertEquals(600, readLe32(bytesOf(ended), 8), "answers the stream's last reply");
        assertEquals(0, OpMsg.parse(ended).flags() & OpMsg.MORE_TO_COME, "an error ends the stream");
        assertEquals(91, body(ended).getInt32("code").getValue());
        sendMsg(opMsg(110, 0, OpMsg.EXHAUST_ALLOWED).body(knows).build()); // a client that streams again on this connection
        ByteBuf[] streamed = new ByteBuf[2];
        assertNull(pass(buf(opMsg(601, 600, OpMsg.MORE_TO_COME).body(REAL_REPLY).build()),
                frame -> exchange.onReply(ALLOC, streamed[0] = frame)), "the ended stream goes nowhere");
        assertEquals(110, readLe32(bytesOf(reply(opMsg(700, 110, OpMsg.MORE_TO_COME).body(REAL_REPLY).build())), 8),
                "the new stream's reply goes to the client");
        assertNull(pass(buf(opMsg(602, 601, 0).body(REAL_REPLY).build()), frame -> exchange.onReply(ALLOC, streamed[1] = frame)));
        assertEquals(0, streamed[0].refCnt() + streamed[1].refCnt(), "dropped and released");
        reply(opMsg(701, 700, 0).body(REAL_REPLY).build()); // the new stream's last
        assertFalse(exchange.expectsReplies());

        sendMsg(opMsg(101, 0, 0).body(knows).build()); // one reply, awaited at the member
        assertEquals(101, readLe32(bytesOf(own(exchange.answerAwaitingWithError(ALLOC, 1002, error))), 8));
        assertNull(reply(opMsg(603, 101, 0).body(REAL_REPLY).build()), "its late answer is dropped");
        assertNull(exchange.answerAwaitingWithError(ALLOC, 1003, error), "answered once");

        sendMsg(opMsg(102, 0, OpMsg.EXHAUST_ALLOWED).body(knows.replace("'6'", "'5'")).build()); // a stream here
        reply(opMsg(604, 102, 0).body(REAL_REPLY).build());
        HelloExchange.Held next = exchange.takeHeld();
        assertEquals(604, next.requestId());
        assertEquals(604, readLe32(bytesOf(own(exchange.answerAwaitingWithError(ALLOC, 1004, error))), 8));
        assertNull(exchange.answerWaitedHere(ALLOC, 1005, 604), "the stream made here ended with the error");
    }

    /**
     * jongodb gives isMaster replies a processId of their own: the client is shown hello's, as a
     * mongod has one, and an awaitable isMaster asking with it reaches the member with the member's.
     */
    @Test
    void aLegacyReplysOwnProcessIdIsShownAsHellos() {
        sendMsg(opMsg(95, 0, 0).body("{hello: 1, $db: 'admin'}").build());
        reply(opMsg(995, 95, 0).body(REAL_REPLY).build());
        String legacyReply = REAL_REPLY.replace("0b0c", "0b0d");
        sendMsg(opMsg(96, 0, 0).body("{isMaster: 1, $db: 'admin'}").build());
        ByteBuf shown = reply(opMsg(996, 96, 0).body(legacyReply).build());
        assertEquals("0102030405060708090a0b0c", body(shown).getDocument("topologyVersion").getObjectId("processId").getValue()
                .toHexString());

        ByteBuf forwarded = sendMsg(opMsg(97, 0, 0).body("{isMaster: 1, topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'},"
                + " counter: {$numberLong: '6'}}, maxAwaitTimeMS: 10000, $db: 'admin'}").build());
        assertEquals("0102030405060708090a0b0d", body(forwarded).getDocument("topologyVersion").getObjectId("processId").getValue()
                .toHexString());
        assertNull(reply(opMsg(997, 97, 0).body(legacyReply).build()), "its answer says what the client knew: held");
    }

    @Test
    void helloSentWithMoreToComeExpectsNoReply() {
        sendMsg(opMsg(30, 0, OpMsg.MORE_TO_COME).body("{hello: 1, $db: 'admin'}").build());
        assertFalse(exchange.expectsReplies());
        assertPassesUntouched(opMsg(600, 30, 0).body(REAL_REPLY).build());
    }

    @Test
    void legacyOpReplyToAnOpQueryHelloIsRewritten() {
        sendQuery(opQuery(40, 0, "admin.$cmd", 0, -1, bson("{isMaster: 1, helloOk: true}"), null));
        assertTrue(exchange.expectsReplies());
        assertRewrittenTo(opReply(700, 40, 8, 0L, 0, 1, bson(REAL_REPLY)), opReply(700, 40, 8, 0L, 0, 1, bson(PROXIED_REPLY)));
        assertFalse(exchange.expectsReplies());
    }

    @Test
    void replyNeedingNoChangeIsPassedAsTheSameBuffer() {
        MemberMap members = new MemberMap("proxy.local", 40000, Map.of(), (upstream, port) -> port);
        exchange = new HelloExchange(new HelloRewriter(members, false, warnings::add), states, MEMBER);
        sendMsg(opMsg(50, 0, 0).body("{hello: 1, $db: 'admin'}").build());
        assertPassesUntouched(opMsg(800, 50, 0).body("{isWritablePrimary: true, maxWireVersion: 21, ok: 1.0}").build());
        assertFalse(exchange.expectsReplies(), "the reply was consumed even though nothing changed");
    }

    @Test
    void helloRepliesUpdateTheMemberState() {
        assertEquals(MemberState.UNKNOWN, states.of(MEMBER));
        sendMsg(opMsg(60, 0, 0).body("{hello: 1, $db: 'admin'}").build());
        reply(opMsg(900, 60, 0).body(REAL_REPLY).build());
        MemberState state = states.of(MEMBER);
        assertEquals(MemberState.Role.PRIMARY, state.role());
        assertEquals(21, state.maxWireVersion());
        assertEquals(6, state.topologyCounter());
        assertEquals("0102030405060708090a0b0c", state.processId().toHexString());
    }

    // ------------------------------------------------------------ handshake requests

    private static final String CLIENT = "{application: {name: 'orders'}, driver: {name: 'mongo-java-driver', version: '5.1.0'},"
            + " os: {type: 'Linux', name: 'Linux', architecture: 'amd64'}, platform: 'Java/17'}";

    @Test
    void opMsgHandshakeIsForwardedWithoutCompressionAndOtherwiseIdentical() {
        int flags = OpMsg.CHECKSUM_PRESENT;
        byte[] request = opMsg(70, 0, flags)
                .body("{hello: 1, helloOk: true, client: " + CLIENT + ", compression: ['snappy', 'zstd'], loadBalanced: false, $db: 'admin'}")
                .build();
        byte[] expected = opMsg(70, 0, flags)
                .body("{hello: 1, helloOk: true, client: " + CLIENT + ", loadBalanced: false, $db: 'admin'}")
                .build();
        ByteBuf[] in = new ByteBuf[1];
        ByteBuf out = pass(buf(request), frame -> {
            OpMsg msg = OpMsg.parse(in[0] = frame);
            return exchange.onRequest(ALLOC, frame, CommandFacts.ofOpMsg(frame, msg), msg, null);
        });
        assertNotSame(in[0], out);
        assertEquals(0, in[0].refCnt(), "the original request is released");
        assertArrayEquals(expected, bytesOf(out));
        assertTrue(exchange.expectsReplies(), "the handshake's reply is still expected");
    }

    @Test
    void opQueryHandshakeIsForwardedWithoutCompressionAndOtherwiseIdentical() {
        byte[] request = opQuery(71, 4, "admin.$cmd", 0, -1,
                bson("{isMaster: 1, helloOk: true, client: " + CLIENT + ", compression: ['zlib']}"), null);
        byte[] expected = opQuery(71, 4, "admin.$cmd", 0, -1,
                bson("{isMaster: 1, helloOk: true, client: " + CLIENT + "}"), null);
        assertArrayEquals(expected, bytesOf(sendQuery(request)));
        assertTrue(exchange.expectsReplies());
    }

    @Test
    void wrappedOpQueryHandshakeLosesCompressionInsideTheWrapper() {
        byte[] selector = bson("{ismaster: 1}");
        byte[] request = opQuery(72, 0, "admin.$cmd", 0, -1,
                bson("{$query: {ismaster: 1, client: " + CLIENT + ", compression: ['snappy']}, $readPreference: {mode: 'primaryPreferred'}}"),
                selector);
        byte[] expected = opQuery(72, 0, "admin.$cmd", 0, -1,
                bson("{$query: {ismaster: 1, client: " + CLIENT + "}, $readPreference: {mode: 'primaryPreferred'}}"),
                selector);
        assertArrayEquals(expected, bytesOf(sendQuery(request)));
    }

    @Test
    void handshakeWithoutCompressorsIsForwardedAsTheSameBuffer() {
        byte[] request = opMsg(73, 0, 0).body("{hello: 1, client: " + CLIENT + ", compression: [], $db: 'admin'}").build();
        ByteBuf[] in = new ByteBuf[1];
        ByteBuf out = pass(buf(request), frame -> {
            OpMsg msg = OpMsg.parse(in[0] = frame);
            return exchange.onRequest(ALLOC, frame, CommandFacts.ofOpMsg(frame, msg), msg, null);
        });
        assertSame(in[0], out);
        assertEquals(1, out.refCnt());
        assertArrayEquals(request, bytesOf(out));
    }
}
