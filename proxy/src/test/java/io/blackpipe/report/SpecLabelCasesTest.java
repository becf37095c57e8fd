package io.blackpipe.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.ScriptedMongod;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The cases that tell retrying a write by label from retrying it by code run only where the label
 * decides (4.4+, maxWireVersion 9): before, a driver labels a listed code itself, and the report
 * leaves them out and says so on its upstream line.
 */
class SpecLabelCasesTest {
    @Test
    void beforeMongo44TheLabelCasesAreLeftOutAndTheUpstreamLineSaysWhy() throws Exception {
        try (ScriptedMongod server42 = ScriptedMongod.builder().maxWireVersion(8).version("4.2.24").start()) {
            List<SpecCase> cases = new ArrayList<>(SpecCase.all().stream().filter(SpecCase::byLabel).toList());
            cases.add(new SpecCase("retryable read", "find", "find", 10107, 1, true));
            SpecCheck check = SpecCheck.run(server42.uri("replicaSet=" + ScriptedMongod.SET_NAME), "scripted 4.2 primary",
                    SpecDriver.bundledJava(), line -> { }, cases);
            assertEquals(1, check.results().size(), check.text());
            assertEquals("find", check.results().get(0).specCase().operation());
            assertTrue(check.allMatch(), check.text());
            assertTrue(check.text().contains("upstream: scripted 4.2 primary (maxWireVersion 8, before MongoDB 4.4's 9: drivers "
                    + "retry writes by code there, so the by label (4.4+) cases are left out)"), check.text());
        }
    }

    @Test
    void fromMongo44TheyRunAndTheJavaDriverGoesByTheLabel() throws Exception {
        try (ScriptedMongod server44 = ScriptedMongod.builder().maxWireVersion(9).version("4.4.29").start()) {
            List<SpecCase> cases = SpecCase.all().stream().filter(SpecCase::byLabel).toList();
            SpecCheck check = SpecCheck.run(server44.uri("replicaSet=" + ScriptedMongod.SET_NAME), "scripted 4.4 primary",
                    SpecDriver.bundledJava(), line -> { }, cases);
            assertEquals(2, check.results().size(), check.text());
            assertTrue(check.allMatch(), check.text());
            assertEquals(1, check.results().get(0).attempts(), "10107 without the label: not retried");
            assertEquals(2, check.results().get(1).attempts(), "2 BadValue with the label: retried");
            assertTrue(check.text().startsWith("upstream: scripted 4.4 primary\n"), check.text());
        }
    }
}
