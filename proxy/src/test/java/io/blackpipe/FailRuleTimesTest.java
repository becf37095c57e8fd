package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/** FailRule.times: how many matching attempts a rule fires on. */
class FailRuleTimesTest {
    private final RecordedRules rules = new RecordedRules();

    /** {times: 0} fires once on the server and through the proxy; times(n) says how many, so 0 and less are refused. */
    @Test
    void timesBelowOneIsRefusedBeforeAnythingIsAdded() {
        assertEquals("times(): must be at least 1, got 0 ({times: 0} fires once, as on the server)",
                assertThrows(IllegalArgumentException.class, () -> rules.fail("find").times(0)).getMessage());
        assertEquals("times(): must be at least 1, got -1",
                assertThrows(IllegalArgumentException.class, () -> rules.fail("find").times(-1)).getMessage(),
                "refused here as 0 is, not by the proxy with the server's 'must be a non-negative integer', which allows 0");
        assertEquals(List.of(), rules.added, "nothing was added");
    }
}
