package io.blackpipe.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodFrame;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The databases the report and --spec write to on the user's deployment: each case's is dropped
 * once judged (a CI deployment gathered dozens per run, for good), and no run's names are an
 * earlier run's (a counter found where an earlier run left it would be judged as this run's).
 */
class ScratchDatabasesTest {
    @Test
    void eachSpecCaseDropsTheDatabaseItSeeded() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start()) {
            List<SpecCase> cases = List.of(new SpecCase("retryable write", "insert", "insert", 10107, 1, true),
                    new SpecCase("never retried", "deleteMany", "delete", null, 1, false));
            SpecCheck check = SpecCheck.run(scripted.uri(), "scripted", SpecDriver.bundledJava(), line -> { }, cases);
            assertTrue(check.allMatch(), check.text());
            List<String> seeded = databases(scripted.commandsReceived("insert")).stream().distinct().toList();
            assertEquals(2, seeded.size(), seeded::toString);
            assertEquals(seeded, databases(scripted.commandsReceived("dropDatabase")));
        }
    }

    @Test
    void twoRunsNeverShareADatabaseName() {
        // A 20-bit random id made a later run against a long-lived deployment meet an earlier run's
        // databases: among 5000 runs, a dozen pairs shared one.
        Set<String> names = new HashSet<>();
        for (int run = 0; run < 5000; run++) {
            names.add(new ScratchDatabases("report").name(0));
        }
        assertEquals(5000, names.size());
        String name = new ScratchDatabases("report").name(29);
        assertTrue(name.startsWith("blackpipe_report_") && name.endsWith("_29") && name.length() < 64, name);
    }

    private static List<String> databases(List<ScriptedMongodFrame> commands) {
        return commands.stream().map(f -> f.document().getString("$db").getValue()).toList();
    }
}
