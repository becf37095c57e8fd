package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * `fault add --truncate BYTES` against a real proxy: the rule it adds, how `fault list` shows it, and the rules
 * in force when a truncation is refused (by the CLI, or by the API for JSON).
 */
class FaultAddTruncateCliTest {
    @Test
    void aTruncationIsListedWithItsBytesAndARefusedOneLeavesTheRulesInForce() {
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            CliRun added = rig.run("fault", "add", "--id", "cut-reply", "--command", "insert", "--truncate", "20", "--times", "1");
            assertEquals(0, added.exitCode(), added::toString);
            assertEquals("cut-reply", added.out().strip());

            CliRun zero = rig.run("fault", "add", "--truncate", "0", "--command", "find");
            assertEquals(2, zero.exitCode(), zero::toString);
            assertEquals("Invalid value for option '--truncate': '0': the bytes must be a whole number of at least 1",
                    zero.err().lines().findFirst().orElse(""), zero::toString);
            CliRun words = rig.run("fault", "add", "--truncate", "some", "--command", "find");
            assertEquals(2, words.exitCode(), words::toString);
            assertEquals("Invalid value for option '--truncate': 'some': the bytes must be a whole number of at least 1",
                    words.err().lines().findFirst().orElse(""), words::toString);
            CliRun withDelay = rig.run("fault", "add", "--truncate", "20", "--delay", "1s", "--command", "find");
            assertEquals(2, withDelay.exitCode(), withDelay::toString);
            assertTrue(withDelay.err().lines().findFirst().orElse("").startsWith("--truncate and --delay are two actions"), withDelay::toString);
            CliRun onHello = rig.run("fault", "add", "--truncate", "20", "--command", "hello");
            assertEquals(2, onHello.exitCode(), onHello::toString);
            assertTrue(onHello.err().lines().findFirst().orElse("").startsWith("--truncate: hello and isMaster can be failed with"),
                    onHello::toString);
            CliRun json = rig.run("fault", "add", "{configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                    + " data: {failCommands: ['find'], truncateReplyBytes: 20, dropReply: true}}");
            assertEquals(1, json.exitCode(), json::toString);
            assertTrue(json.err().contains("400") && json.err().contains("data.truncateReplyBytes: give dropReply or truncateReplyBytes"),
                    json::toString);
            assertEquals(List.of("cut-reply"), rig.ruleIds(), "the rules in force stay");

            CliRun list = rig.run("fault", "list");
            assertEquals(0, list.exitCode(), list::toString);
            List<String> row = list.lines().stream().map(l -> List.of(l.trim().split(" {2,}")))
                    .filter(c -> c.get(0).equals("cut-reply")).findFirst().orElseThrow(() -> new AssertionError(list.toString()));
            assertEquals(List.of("{times: 1} (1 left)", "truncateReply", "truncate=20B", "0", "insert"), row.subList(1, 6),
                    list::toString);
        }
    }
}
