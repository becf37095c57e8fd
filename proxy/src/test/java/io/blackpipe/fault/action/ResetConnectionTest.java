package io.blackpipe.fault.action;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.fault.FakeInterception;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResetConnectionTest {
    @Test
    void resetsTheClientConnectionWithoutForwarding() {
        FakeInterception command = FakeInterception.retryableInsert();
        new ResetConnection().apply(command);
        assertEquals(List.of("reset"), command.calls, "a reset, not a FIN close, and the server never sees the command");
        assertEquals("resetConnection", new ResetConnection().name());
    }
}
