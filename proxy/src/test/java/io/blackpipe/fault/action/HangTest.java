package io.blackpipe.fault.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.FakeInterception;
import java.util.List;
import org.junit.jupiter.api.Test;

class HangTest {
    @Test
    void neitherForwardsNorAnswersNorCloses() {
        FakeInterception command = FakeInterception.retryableInsert();
        new Hang().apply(command);
        assertEquals(List.of("hang"), command.calls);
        assertTrue(command.waits.isEmpty());
        assertEquals("hang", new Hang().name());
    }
}
