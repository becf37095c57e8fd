package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * A member that refused what a mongod takes is asked, at start, two writes in blackpipe_probe.writes, which the probe
 * deletes. A probe cut off mid-way (a member that let a question wait past its time) left its documents there; the
 * next start's deletes what is an hour old or more, and a slow clean-up no longer costs the answer.
 */
class ProbeLeftoversTest {
    private static final String SAID_RETRIES = "runs a retried write again";

    /** On jongodb (here) the old document goes and the new one, another proxy's probe under way, stays; a mongod is asked no write. */
    @Test
    void aStartDeletesWhatAnInterruptedProbeLeftAnHourAgoOrMore() throws Exception {
        ObjectId anHourAndAMinuteAgo = new ObjectId(Date.from(Instant.now().minus(Duration.ofMinutes(61))));
        ObjectId underWay = new ObjectId();
        try (MongoClient direct = UpstreamLane.directClient()) {
            MongoCollection<Document> writes = direct.getDatabase("blackpipe_probe").getCollection("writes");
            writes.insertMany(List.of(new Document("_id", anHourAndAMinuteAgo).append("n", 2), new Document("_id", underWay).append("n", 1)));
            try (LogCapture log = LogCapture.start();
                 ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
                List<ObjectId> left = writes.find(Filters.in("_id", anHourAndAMinuteAgo, underWay)).map(d -> d.getObjectId("_id"))
                        .into(new ArrayList<>());
                List<ObjectId> expected = UpstreamLane.isJongodb() ? List.of(underWay) : List.of(anHourAndAMinuteAgo, underWay);
                assertEquals(expected, left, () -> UpstreamLane.name() + ": " + String.join("\n", log.messages()));
            } finally {
                writes.deleteMany(Filters.in("_id", anHourAndAMinuteAgo, underWay));
            }
        }
    }

    /**
     * Its deletes answered only after the question's second: the probe goes on (the late answers passed over), its
     * answer stands, and the member is asked once; the probe's documents are deleted all the same.
     */
    @Test
    void aSlowCleanUpKeepsTheAnswer() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().withoutEndSessions().reappliesRetriedWrites().start();
             LogCapture log = LogCapture.start()) {
            member.delayReplies("delete", 1_500);
            try (ProxyServer proxy = ScriptedProxy.start(member)) {
                log.await(m -> m.startsWith("member " + member.address() + " " + SAID_RETRIES), Duration.ofSeconds(10), "noting the member");
                assertTrue(log.messages().stream().noneMatch(m -> m.contains("did not answer")), () -> String.join("\n", log.messages()));
                assertEquals(2, member.commandsReceived("update").size(), "asked once: the increment and its retry");
                Await.until(Duration.ofSeconds(5), "the probe's documents deleted",
                        () -> member.documents("blackpipe_probe", "writes").isEmpty());
            }
        }
    }
}
