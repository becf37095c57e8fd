package io.blackpipe.fault.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.blackpipe.fault.FakeInterception;
import java.util.List;
import org.junit.jupiter.api.Test;

class CloseConnectionTest {
    @Test
    void closesTheClientConnectionWithoutForwardingOrAnswering() {
        FakeInterception command = FakeInterception.retryableInsert();
        new CloseConnection().apply(command);
        assertEquals(List.of("close"), command.calls);
        assertNull(command.answered);
        assertEquals("closeConnection", new CloseConnection().name());
    }
}
