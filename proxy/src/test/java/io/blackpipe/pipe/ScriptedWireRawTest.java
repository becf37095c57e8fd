package io.blackpipe.pipe;

import static io.blackpipe.pipe.ScriptedProxy.awaitTrue;
import static io.blackpipe.pipe.ScriptedProxy.port;
import static io.blackpipe.pipe.ScriptedProxy.wire;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.Meters;
import io.blackpipe.testing.WireSocket;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodFrame;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.ScriptedMongodWire.OpMsg;
import io.blackpipe.topology.Member;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Wire paths the sync Java driver never takes (exhaust getMore, OP_MSG checksums), driven through
 * the proxy to a {@link ScriptedMongod} with a bare socket built from {@link ScriptedMongodWire}.
 */
class ScriptedWireRawTest {

    @Test
    void exhaustGetMoreStreamsEveryBatchThroughTheProxyInOrder() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            scripted.insertDocuments("test", "ex", IntStream.range(0, 7)
                    .mapToObj(i -> new BsonDocument("_id", new BsonInt32(i))).toList());
            int findId = raw.sendMsg(0, new BsonDocument("find", new BsonString("ex")).append("batchSize", new BsonInt32(2))
                    .append("$db", new BsonString("test")));
            byte[] findReply = raw.read();
            assertEquals(findId, ScriptedMongodWire.responseTo(findReply));
            BsonDocument cursor = ScriptedMongodWire.parseOpMsg(findReply).body().getDocument("cursor");
            assertEquals(List.of(0, 1), ids(cursor, "firstBatch"));
            long cursorId = cursor.getInt64("id").getValue();
            assertNotEquals(0, cursorId);

            int getMoreId = raw.sendMsg(ScriptedMongodWire.FLAG_EXHAUST_ALLOWED,
                    new BsonDocument("getMore", new BsonInt64(cursorId)).append("collection", new BsonString("ex"))
                            .append("batchSize", new BsonInt32(2)).append("$db", new BsonString("test")));
            List<Integer> streamedIds = new ArrayList<>();
            List<Boolean> moreToCome = new ArrayList<>();
            int expectedResponseTo = getMoreId;
            long id = cursorId;
            while (id != 0) {
                byte[] reply = raw.read();
                assertEquals(expectedResponseTo, ScriptedMongodWire.responseTo(reply), "responseTo chains reply to reply");
                expectedResponseTo = ScriptedMongodWire.requestId(reply);
                OpMsg m = ScriptedMongodWire.parseOpMsg(reply);
                streamedIds.addAll(ids(m.body().getDocument("cursor"), "nextBatch"));
                moreToCome.add(m.moreToCome());
                id = m.body().getDocument("cursor").getInt64("id").getValue();
                // What the driver side received is exactly what the server sent.
                int replyId = ScriptedMongodWire.requestId(reply);
                assertArrayEquals(scripted.framesSent(f -> f.requestId() == replyId).get(0).raw(), reply);
            }
            assertEquals(List.of(2, 3, 4, 5, 6), streamedIds, "batches arrive in order");
            assertEquals(List.of(true, true, false), moreToCome);
            assertEquals(2, scripted.moreToComeRepliesSent());
            raw.expectSilence(300);
            // The server received the getMore once; the stream needed no further requests.
            assertEquals(1, scripted.commandsReceived("getMore").size());
            assertTrue(scripted.commandsReceived("getMore").get(0).exhaustAllowed());

            // The connection is still in step after the stream: a plain command is answered.
            int pingId = raw.sendMsg(0, ping("after-exhaust"));
            byte[] pong = raw.read();
            assertEquals(pingId, ScriptedMongodWire.responseTo(pong));
            assertEquals(1.0, ScriptedMongodWire.parseOpMsg(pong).body().getNumber("ok").doubleValue());
            assertEquals(List.of(), scripted.errors());
        }
    }

    /**
     * delayReplyMS holds an exhaust stream's first reply, trickleReply sends it in pieces (16 bytes every
     * 40 ms); the ones streamed after it wait behind it, each answering the one before, and pass as they came.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {"delayReply | delayReplyMS: 300", "trickleReply | trickleReplyBytes: 16, trickleReplyIntervalMS: 40"})
    void aHeldFirstExhaustReplyIsNotOvertakenByTheOnesStreamedAfterIt(String fault, String fate) throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            scripted.insertDocuments("test", "ex", IntStream.range(0, 200)
                    .mapToObj(i -> new BsonDocument("_id", new BsonInt32(i))).toList());
            raw.sendMsg(0, new BsonDocument("find", new BsonString("ex")).append("batchSize", new BsonInt32(2))
                    .append("$db", new BsonString("test")));
            long cursorId = ScriptedMongodWire.parseOpMsg(raw.read()).body().getDocument("cursor").getInt64("id").getValue();
            proxy.rules().put(proxy.ruleParser().parse("slow", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: {times: 1}, data: {failCommands: ['getMore'], " + fate + "}}")));
            long sent = System.nanoTime();
            int getMoreId = raw.sendMsg(ScriptedMongodWire.FLAG_EXHAUST_ALLOWED,
                    new BsonDocument("getMore", new BsonInt64(cursorId)).append("collection", new BsonString("ex"))
                            .append("batchSize", new BsonInt32(2)).append("$db", new BsonString("test")));
            List<Integer> streamedIds = new ArrayList<>();
            int expectedResponseTo = getMoreId;
            long id = cursorId;
            while (id != 0) {
                byte[] reply = raw.read();
                if (streamedIds.isEmpty()) { // held 300 ms, or sent in pieces, the first at once
                    long least = fault.equals("delayReply") ? 300 : ((reply.length + 15) / 16 - 1) * 40L;
                    assertTrue(System.nanoTime() - sent >= least * 1_000_000L, "the first reply took " + least + " ms at least");
                }
                BsonDocument cursor = ScriptedMongodWire.parseOpMsg(reply).body().getDocument("cursor");
                assertEquals(expectedResponseTo, ScriptedMongodWire.responseTo(reply),
                        "reply " + streamedIds.size() / 2 + " of the stream (" + cursor.getArray("nextBatch") + ") answers the one before");
                expectedResponseTo = ScriptedMongodWire.requestId(reply);
                streamedIds.addAll(ids(cursor, "nextBatch"));
                id = cursor.getInt64("id").getValue();
            }
            assertEquals(IntStream.range(2, 200).boxed().toList(), streamedIds);
            assertEquals(1, Meters.faults(proxy.registry(), fault, "getMore"));
            assertEquals(1, Meters.outcomes(proxy.registry(), "getMore", "ok"), "the stream's last reply ended it");
        }
    }

    /** The legacy shell sends findAndModify as findandmodify: it counts, and a rule on findAndModify fails it, as on mongod. */
    @Test
    void aCommandSentUnderItsOtherNameIsCountedAndFaultedUnderItsOwn() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket raw = wire(proxy)) {
            proxy.rules().put(proxy.ruleParser().parse("fam", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: {times: 1}, data: {failCommands: ['findAndModify'], errorCode: 13}}")));
            int id = raw.sendMsg(0, BsonDocument.parse("{findandmodify: 'c', query: {_id: 1}, update: {$set: {a: 1}}, $db: 'test'}"));
            byte[] reply = raw.read();
            assertEquals(id, ScriptedMongodWire.responseTo(reply));
            assertEquals(13, ScriptedMongodWire.parseOpMsg(reply).body().getInt32("code").getValue());
            assertEquals(1, Meters.attempts(proxy.registry(), "findAndModify"));
            assertEquals(1, Meters.faults(proxy.registry(), "errorReply", "findAndModify"));
        }
    }

    @Test
    void aCorrectChecksumPassesAndAWrongOneClosesOnlyThatConnectionAtTheProxy() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket victim = new WireSocket(port(proxy), 1000, (int) ScriptedProxy.WAIT.toMillis());
             WireSocket bystander = new WireSocket(port(proxy), 2000, (int) ScriptedProxy.WAIT.toMillis())) {
            Member member = ScriptedProxy.member(proxy);
            int bystanderPing = bystander.sendMsg(0, ping("bystander-before"));
            assertEquals(bystanderPing, ScriptedMongodWire.responseTo(bystander.read()));

            // A correct CRC-32C: forwarded as is, answered with a checksummed reply.
            int goodId = victim.sendMsg(ScriptedMongodWire.FLAG_CHECKSUM_PRESENT, ping("good-checksum"));
            byte[] reply = victim.read();
            assertEquals(goodId, ScriptedMongodWire.responseTo(reply));
            assertTrue(ScriptedMongodWire.checksumValid(reply), "the reply's checksum is intact");
            OpMsg m = ScriptedMongodWire.parseOpMsg(reply);
            assertTrue(m.checksumPresent());
            assertEquals(1.0, m.body().getNumber("ok").doubleValue());
            ScriptedMongodFrame good = scripted.framesReceived(f -> f.requestId() == goodId).get(0);
            assertTrue(good.checksumPresent());
            assertArrayEquals(ScriptedMongodWire.buildOpMsg(goodId, 0, ScriptedMongodWire.FLAG_CHECKSUM_PRESENT,
                    ping("good-checksum"), null), good.raw(), "the checksummed request reached the server unchanged");
            assertArrayEquals(scripted.framesSent(f -> f.responseTo() == goodId).get(0).raw(), reply);

            // A wrong CRC-32C: the proxy closes the connection; the server never sees the message.
            int badId = 1999;
            byte[] corrupt = ScriptedMongodWire.buildOpMsg(badId, 0, ScriptedMongodWire.FLAG_CHECKSUM_PRESENT,
                    ping("bad-checksum"), null);
            corrupt[corrupt.length - 1] ^= 0x5A;
            assertFalse(ScriptedMongodWire.checksumValid(corrupt));
            victim.sendRaw(corrupt);
            victim.expectClosed();
            // Once the server has seen the victim's upstream connection end, it has read all it ever will.
            awaitTrue("the victim's upstream connection closed", () -> scripted.openConnections() == 1
                    && proxy.openConnections(member.upstream()) == 1);
            assertTrue(scripted.framesReceived(f -> f.requestId() == badId).isEmpty(), "the corrupt message was not forwarded");
            assertTrue(scripted.framesReceived(f -> f.document() != null && f.document().toJson().contains("bad-checksum"))
                    .isEmpty());
            assertEquals(List.of(), scripted.errors(), "the server saw no checksum problem: the proxy caught it");

            // The other client keeps working.
            int after = bystander.sendMsg(ScriptedMongodWire.FLAG_CHECKSUM_PRESENT, ping("bystander-after"));
            byte[] afterReply = bystander.read();
            assertEquals(after, ScriptedMongodWire.responseTo(afterReply));
            assertEquals(1.0, ScriptedMongodWire.parseOpMsg(afterReply).body().getNumber("ok").doubleValue());
            assertEquals(3, scripted.commandsReceived("ping").size());
        }
    }

    private static BsonDocument ping(String comment) {
        return new BsonDocument("ping", new BsonInt32(1)).append("comment", new BsonString(comment))
                .append("$db", new BsonString("admin"));
    }

    private static List<Integer> ids(BsonDocument cursor, String batch) {
        List<Integer> ids = new ArrayList<>();
        for (BsonValue d : cursor.getArray(batch)) {
            ids.add(d.asDocument().getInt32("_id").getValue());
        }
        return ids;
    }
}
