package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * `fault list` tells apart rules of the same fault: the DETAIL column shows what the FAULT column's one word cannot
 * (which error, its labels, the block before it, the delay), for rules added by flags and as JSON to a real proxy.
 */
class FaultListDetailTest {

    @Test
    void twoErrorRulesWithDifferentCodesAndTheirTimingsLookDifferent() {
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            add(rig, "--id", "not-primary", "--command", "insert", "--error", "NotWritablePrimary", "--times", "1");
            add(rig, "--id", "shutdown", "--command", "insert", "--error-code", "91", "--labels", "RetryableWriteError",
                    "--block", "300ms", "--probability", "0.5");
            add(rig, "--id", "unnamed", "--command", "find", "--error-code", "12345");
            add(rig, "--id", "slow", "--command", "find", "--delay", "1.5s", "--skip", "2");
            add(rig, "--id", "jittery", "--command", "find", "--delay", "200ms", "--jitter", "50ms");
            add(rig, "--id", "stall", "--command", "find", "--block", "2s");
            add(rig, "--id", "wce", "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['update'],"
                    + " writeConcernError: {code: 64, errmsg: 'waiting for replication timed out'}}}");
            add(rig, "--id", "plain", "--command", "delete", "--reset");
            add(rig, "--id", "canned", "--command", "insert", "--reply",
                    "{\"ok\": 1, \"n\": 0, \"writeErrors\": [{\"index\": 0, \"code\": 11000, \"errmsg\": \"E11000 duplicate key\"}]}");

            CliRun list = rig.run("fault", "list");
            assertEquals(0, list.exitCode(), list::toString);
            assertEquals(List.of("ID", "MODE", "FAULT", "DETAIL", "FIRED", "COMMANDS", "MATCHING"), cells(list, "ID"), list::toString);
            assertEquals(List.of("errorReply", "error=NotWritablePrimary(10107)"), cells(list, "not-primary").subList(2, 4), list::toString);
            assertEquals(List.of("errorReply", "error=ShutdownInProgress(91) labels=RetryableWriteError block=300ms"),
                    cells(list, "shutdown").subList(2, 4), list::toString);
            assertNotEquals(cells(list, "not-primary").subList(1, 4), cells(list, "shutdown").subList(1, 4));
            assertEquals("error=12345", cells(list, "unnamed").get(3), () -> "a code without a name: " + list);
            assertEquals(List.of("{skip: 2} (2 to skip)", "delayReply", "delay=1500ms"), cells(list, "slow").subList(1, 4), list::toString);
            assertEquals(List.of("delayReply", "delay=200ms+-50ms"), cells(list, "jittery").subList(2, 4), list::toString);
            assertEquals(List.of("blockConnection", "block=2000ms"), cells(list, "stall").subList(2, 4), list::toString);
            assertEquals(List.of("writeConcernError", "writeConcernError=WriteConcernFailed(64)"), cells(list, "wce").subList(2, 4),
                    list::toString);
            assertEquals(List.of("resetConnection", "-", "0", "delete", "-"), cells(list, "plain").subList(2, 7),
                    () -> "nothing to add: a dash keeps the columns: " + list);
            assertEquals(List.of("cannedReply", "reply={\"ok\": 1, \"n\": 0, \"writeErrors\": [{\"index\": 0, \"code\": 11..."),
                    cells(list, "canned").subList(2, 4), () -> "a long reply cut short: " + list);
            assertTrue(list.lines().stream().allMatch(l -> l.length() < 160), () -> "still a readable width: " + list);
        }
    }

    private static void add(AdminRig rig, String... flags) {
        String[] args = new String[flags.length + 2];
        args[0] = "fault";
        args[1] = "add";
        System.arraycopy(flags, 0, args, 2, flags.length);
        CliRun run = rig.run(args);
        assertEquals(0, run.exitCode(), run::toString);
    }

    private static List<String> cells(CliRun table, String id) {
        return table.lines().stream().map(l -> List.of(l.trim().split(" {2,}"))).filter(c -> c.get(0).equals(id)).findFirst()
                .orElseThrow(() -> new AssertionError(id + " not in " + table));
    }
}
