package io.blackpipe.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.wire.ReplyFacts;
import org.junit.jupiter.api.Test;

/** The per-command loop measures what it says: a fingerprinted find, a counted insert, successful replies. */
class PerCommandTest {
    @Test
    void everyBenchmarkRunsOnWhatTheDriverSends() {
        PerCommand bench = new PerCommand();
        bench.setUp();
        try {
            for (int i = 0; i < 100; i++) { // every variant, more than once: sessions repeat as in a pool
                assertTrue(bench.frames() > 0);
                ReplyFacts reply = bench.readFind();
                assertNotNull(reply, "the find has a session and no txnNumber, so it is fingerprinted");
                assertTrue(reply.ok());
                assertEquals(0, reply.code());
                assertNull(bench.countFind(), "no rules are loaded");
                assertNull(bench.find());
                assertNull(bench.insert());
                assertNull(bench.mix());
            }
        } finally {
            bench.tearDown();
        }
    }
}
