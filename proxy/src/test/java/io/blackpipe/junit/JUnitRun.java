package io.blackpipe.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.blackpipe.testing.UpstreamLane;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs test classes through the JUnit Platform, as a build does, with the test lane as
 * {@code blackpipe.upstream}; for testing the extension's lifecycle from the outside.
 */
final class JUnitRun {
    private final Class<?>[] classes;
    private final Map<String, String> configuration = new HashMap<>();

    private JUnitRun(Class<?>[] classes) {
        this.classes = classes;
    }

    static JUnitRun of(Class<?>... classes) {
        return new JUnitRun(classes);
    }

    /** JUnit's parallel execution, every class and method concurrent, on {@code threads} threads. */
    JUnitRun parallel(int threads) {
        configuration.put("junit.jupiter.execution.parallel.enabled", "true");
        configuration.put("junit.jupiter.execution.parallel.mode.default", "concurrent");
        configuration.put("junit.jupiter.execution.parallel.config.strategy", "fixed");
        configuration.put("junit.jupiter.execution.parallel.config.fixed.parallelism", Integer.toString(threads));
        return this;
    }

    /** Runs the classes; fails naming every failed test and why, unless exactly {@code tests} ran and passed. */
    void assertAllPassed(int tests) {
        TestExecutionSummary summary = run();
        StringWriter failures = new StringWriter();
        summary.printFailuresTo(new PrintWriter(failures), 5);
        assertEquals(0, summary.getTotalFailureCount(), failures::toString);
        assertEquals(tests, summary.getTestsSucceededCount(), "tests that passed");
    }

    /** Runs the classes; what failed, and why. */
    List<Throwable> failures() {
        return run().getFailures().stream().map(TestExecutionSummary.Failure::getException).toList();
    }

    private TestExecutionSummary run() {
        String previous = System.setProperty(BlackPipeExtension.UPSTREAM_PROPERTY, UpstreamLane.singleNodeUri());
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        try {
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                    .selectors(Arrays.stream(classes).map(c -> selectClass(c)).toList())
                    .configurationParameters(configuration)
                    .build(), listener);
        } finally {
            if (previous == null) {
                System.clearProperty(BlackPipeExtension.UPSTREAM_PROPERTY);
            } else {
                System.setProperty(BlackPipeExtension.UPSTREAM_PROPERTY, previous);
            }
        }
        return listener.getSummary();
    }
}
