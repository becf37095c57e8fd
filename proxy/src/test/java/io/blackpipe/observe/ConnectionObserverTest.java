package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.OpCode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

class ConnectionObserverTest {
    private static CommandFacts command(String name) {
        return new CommandFacts(1, OpCode.OP_MSG, name, "db", "c", 0, null, -1, false, false, "", false, false, null, 0);
    }

    @Test
    void aClientSendingEverNewCommandNamesOnOneConnectionCannotGrowItsMeterCache() {
        // Every unknown name counts under the label "other": the connection's cache of meters must be
        // bounded by the labels, not by the names a client makes up (one long-lived connection, a fuzzer).
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        CommandObserver shared = new CommandObserver(registry, new RetryTracker(100, Long.MAX_VALUE / 4), History.inMemory(10));
        ConnectionObserver connection = shared.forConnection("127.0.0.1:27017");
        for (int i = 0; i < 50_000; i++) {
            CommandFacts facts = command("madeUp" + i);
            connection.complete(connection.begin(facts, i), i, Outcome.ERROR, null, 59, false, true);
        }
        connection.complete(connection.begin(command("find"), 1), 1, Outcome.OK, null, 0, false, true);
        assertEquals(50_000, registry.find("blackpipe.command.attempts").tag("command", "other").counter().count());
        assertEquals(1, registry.find("blackpipe.command.attempts").tag("command", "find").counter().count());
        assertTrue(connection.cachedMeters() <= 2, "meters cached on the connection: " + connection.cachedMeters());
    }
}
