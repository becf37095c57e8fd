package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.ScriptedMongod;
import org.junit.jupiter.api.Test;

/** What a user reads after a first mistake says what is wrong and what to do instead. */
class BlackPipeUserMistakesTest {
    @Test
    void aNullUpstreamIsNamedAsTheOtherBadArgumentsAre() {
        // it was a NullPointerException reading "upstream"; a blank one was already this IllegalArgumentException
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> BlackPipe.start(null));
        assertEquals("upstream: required, a mongodb:// or mongodb+srv:// URI, got null", refused.getMessage());
        assertEquals("upstream: required, a mongodb:// or mongodb+srv:// URI",
                assertThrows(IllegalArgumentException.class, () -> BlackPipe.start(" ")).getMessage());
    }

    @Test
    void aFailoverInFrontOfASingleNodeSaysHowToSimulateASet() throws Exception {
        try (ScriptedMongod single = ScriptedMongod.start(); // a single-node replica set, as most dev setups are
             BlackPipe blackPipe = BlackPipe.start(single.uri())) {
            IllegalStateException refused = assertThrows(IllegalStateException.class, blackPipe::failover);
            assertTrue(refused.getMessage().startsWith("failover needs a replica set with more than one member; this upstream is"),
                    refused.getMessage());
            assertTrue(refused.getMessage().endsWith(" with 1 member (blackpipe can present one node as a set: --simulate-members 3,"
                    + " BlackPipe.builder().simulateMembers(3), @BlackPipeTest(simulateMembers = 3))"), refused.getMessage());
        }
    }
}
