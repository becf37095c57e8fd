package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandSucceededEvent;
import java.util.List;
import java.util.LongSummaryStatistics;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** delayReplyJitterMS, as the real driver through the proxy meets it: each reply held for its own time around the delay. */
class DelayJitterDriverTest extends DriverRigTest {

    @Test
    void eachReplyIsHeldForItsOwnTimeAroundTheDelay() {
        rig.rule("'alwaysOn'", "find", "delayReplyMS: 200, delayReplyJitterMS: 150");
        MongoCollection<Document> c = rig.collection(rig.client("retryReads=true"));
        rig.serverSide("c").insertOne(new Document("_id", 1));

        for (int i = 0; i < 12; i++) {
            assertEquals(1, c.find().first().getInteger("_id"));
        }
        List<Long> took = rig.driverSucceeded().stream().filter(e -> e.getCommandName().equals("find"))
                .map(e -> e.getElapsedTime(TimeUnit.MILLISECONDS)).toList();
        assertEquals(12, took.size());
        LongSummaryStatistics stats = took.stream().mapToLong(Long::longValue).summaryStatistics();
        // drawn from 50 to 350 ms; the seeded draws of this rig spread wider than any machine's noise
        assertTrue(stats.getMin() >= 50, "no reply is held for less than delay - jitter: " + took);
        assertTrue(stats.getMax() - stats.getMin() >= 100, "the replies were held for different times: " + took);
        assertTrue(stats.getMin() < 200 && stats.getMax() > 200, "on both sides of the delay: " + took);
        assertEquals(12, rig.faults("delayReply", "find"));
    }
}
