package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * `fault add --trickle BYTES/INTERVAL` against a real proxy: the rule it adds, how `fault list` shows it,
 * and the rules in force when a trickle is refused (by the CLI, or by the API for JSON).
 */
class FaultAddTrickleCliTest {
    @Test
    void aTrickleIsListedWithItsPiecesAndARefusedOneLeavesTheRulesInForce() {
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            CliRun added = rig.run("fault", "add", "--id", "slow-link", "--command", "find", "--trickle", "64/250ms", "--times", "1");
            assertEquals(0, added.exitCode(), added::toString);
            assertEquals("slow-link", added.out().strip());

            CliRun help = rig.run("fault", "add", "--trickle", "64", "--command", "find");
            assertEquals(2, help.exitCode(), help::toString);
            assertEquals("Invalid value for option '--trickle': '64' is not BYTES/INTERVAL such as 64/250ms",
                    help.err().lines().findFirst().orElse(""), help::toString);
            CliRun zero = rig.run("fault", "add", "--trickle", "0B/250ms", "--command", "find");
            assertEquals("Invalid value for option '--trickle': '0B/250ms': the bytes of a piece must be a whole number of at least 1",
                    zero.err().lines().findFirst().orElse(""), zero::toString);
            CliRun json = rig.run("fault", "add", "{configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                    + " data: {failCommands: ['find'], trickleReplyIntervalMS: 250}}");
            assertEquals(1, json.exitCode(), json::toString);
            assertTrue(json.err().contains("400") && json.err().contains("data.trickleReplyBytes: required with trickleReplyIntervalMS"),
                    json::toString);
            assertEquals(List.of("slow-link"), rig.ruleIds(), "the rules in force stay");

            CliRun list = rig.run("fault", "list");
            assertEquals(0, list.exitCode(), list::toString);
            List<String> row = list.lines().stream().map(l -> List.of(l.trim().split(" {2,}")))
                    .filter(c -> c.get(0).equals("slow-link")).findFirst().orElseThrow(() -> new AssertionError(list.toString()));
            assertEquals(List.of("{times: 1} (1 left)", "trickleReply", "trickle=64B/250ms", "0", "find"), row.subList(1, 6),
                    list::toString);
        }
    }
}
