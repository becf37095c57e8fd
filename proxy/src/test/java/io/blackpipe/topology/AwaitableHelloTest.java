package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/** Which of a simulated member's hello replies are held as the member would hold them, and for how long at most. */
class AwaitableHelloTest {
    private static final BsonDocument VERSION = version(new ObjectId(), 3);

    @Test
    void aReplyWithTheVersionTheClientKnewIsHeldForAtMostTheRestOfItsWait() {
        AwaitableHello awaitable = asked(7, awaitableHello(VERSION, 10_000));
        long millis = awaitable.holdMillis(7, reply(VERSION.clone()));
        assertTrue(millis > 9_000 && millis <= 10_000, "held " + millis + " ms");
        assertEquals("hello", awaitable.command());
        assertEquals(0, awaitable.holdMillis(7, reply(VERSION.clone())), "one hold per hello");
    }

    @Test
    void aNewVersionAnotherRequestOrAnAnswerGivenMeanwhileGoAtOnce() {
        assertEquals(0, asked(7, awaitableHello(VERSION, 10_000)).holdMillis(7, reply(version(VERSION.getObjectId("processId").getValue(), 4))),
                "a counter moved on");
        assertEquals(0, asked(7, awaitableHello(VERSION, 10_000)).holdMillis(7, reply(version(new ObjectId(), 3))), "another process");
        assertEquals(0, asked(7, awaitableHello(VERSION, 10_000)).holdMillis(8, reply(VERSION.clone())), "another request's reply");
        AwaitableHello answered = asked(7, awaitableHello(VERSION, 10_000));
        answered.forget();
        assertEquals(0, answered.holdMillis(7, reply(VERSION.clone())), "answered meanwhile");
        assertEquals(0, asked(7, awaitableHello(VERSION, 0)).holdMillis(7, reply(VERSION.clone())), "no wait asked");
    }

    @Test
    void aHelloThatAwaitsNothingOrIsMalformedIsNotNoted() {
        BsonDocument plain = new BsonDocument("hello", new BsonInt32(1));
        assertEquals(0, asked(7, plain).holdMillis(7, reply(VERSION.clone())), "no topologyVersion, no maxAwaitTimeMS");
        assertEquals(0, asked(7, plain.clone().append("topologyVersion", VERSION)).holdMillis(7, reply(VERSION.clone())));
        assertEquals(0, asked(7, awaitableHello(VERSION, 10_000).append("maxAwaitTimeMS", new BsonString("10s")))
                .holdMillis(7, reply(VERSION.clone())), "maxAwaitTimeMS not a number");
        assertEquals(0, asked(7, awaitableHello(VERSION, -1)).holdMillis(7, reply(VERSION.clone())), "a negative wait");
        assertEquals(0, asked(7, awaitableHello(new BsonDocument("processId", new BsonString("x")).append("counter", new BsonInt64(3)), 10_000))
                .holdMillis(7, reply(VERSION.clone())), "a processId that is not an ObjectId");
    }

    @Test
    void aHeldStreamGoesOnFromHereOneReplyEachWaitUntilTheNextHello() {
        AwaitableHello awaitable = new AwaitableHello();
        awaitable.asked(7, "isMaster", awaitableHello(VERSION, 10_000), true);
        long millis = awaitable.holdMillis(7, reply(VERSION.clone()));
        awaitable.hold(millis);
        assertTrue(awaitable.streamsHere());
        assertEquals(new HelloExchange.Held(7, millis), awaitable.takeHeld(), "the first reply answers the hello");
        assertEquals(null, awaitable.takeHeld(), "taken once");
        assertEquals(7, awaitable.chain());
        awaitable.chainTo(90);
        assertEquals(90, awaitable.chain(), "the next answers the last reply");
        assertEquals(new HelloExchange.Held(90, 10_000), awaitable.takeHeld(), "a whole wait later");
        assertEquals("isMaster", awaitable.command());
        awaitable.newHello();
        assertFalse(awaitable.streamsHere(), "a new hello ends the stream");

        AwaitableHello oneReply = asked(8, awaitableHello(VERSION, 10_000));
        oneReply.hold(oneReply.holdMillis(8, reply(VERSION.clone())));
        assertFalse(oneReply.streamsHere(), "without exhaustAllowed, one reply");
    }

    private static AwaitableHello asked(int requestId, BsonDocument request) {
        AwaitableHello awaitable = new AwaitableHello();
        awaitable.asked(requestId, "hello", request, false);
        return awaitable;
    }

    private static BsonDocument awaitableHello(BsonDocument version, long maxAwaitMillis) {
        return new BsonDocument("hello", new BsonInt32(1)).append("topologyVersion", version)
                .append("maxAwaitTimeMS", new BsonInt64(maxAwaitMillis));
    }

    private static BsonDocument reply(BsonDocument version) {
        return new BsonDocument("isWritablePrimary", BsonBoolean.TRUE).append("topologyVersion", version);
    }

    private static BsonDocument version(ObjectId processId, long counter) {
        return new BsonDocument("processId", new BsonObjectId(processId)).append("counter", new BsonInt64(counter));
    }
}
