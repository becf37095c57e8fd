package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.blackpipe.testing.ScriptedMongod;
import org.junit.jupiter.api.Test;

/**
 * Simulated members stand for a replica set's, over the one real node: a node that is no replica set member is
 * refused at start, naming what it is and what to do. Over a standalone, a driver seeing a set sends every retryable
 * write with a txnNumber, which a standalone refuses (so every default write failed); over a mongos, msg: isdbgrid
 * made the simulated members routers to drivers that look at it first (the Node.js driver's), and none was selectable.
 */
class SimulatedSetUpstreamTest {
    @Test
    void aStandaloneIsRefusedNamingHowToMakeItASetOfOne() throws Exception {
        try (ScriptedMongod standalone = ScriptedMongod.builder().standalone().start()) {
            IllegalStateException refused = assertThrows(IllegalStateException.class,
                    () -> BlackPipe.builder().upstream(standalone.uri("")).simulateMembers(3).start().close());
            assertEquals("--simulate-members needs a single-node replica set; this upstream is a standalone (start mongod with"
                    + " --replSet rs0 and run rs.initiate(): a set of one member)", refused.getMessage());
        }
    }

    @Test
    void aMongosIsRefusedNamingWhatToNameInstead() throws Exception {
        try (ScriptedMongod mongos = ScriptedMongod.builder().mongos().start()) {
            IllegalStateException refused = assertThrows(IllegalStateException.class,
                    () -> BlackPipe.builder().upstream(mongos.uri("")).simulateMembers(3).start().close());
            assertEquals("--simulate-members needs a single-node replica set; this upstream is a mongos (name one member of a"
                    + " shard's replica set, or a single-node replica set)", refused.getMessage());
        }
    }
}
