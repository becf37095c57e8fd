package io.blackpipe.junit;

import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The tests of a @BlackPipeTest class take turns on their shared proxy through {@link OneTestAtATime}, a
 * ResourceLocksProvider, which JUnit has from 5.12 on. An older JUnit reads only the annotation's shared
 * read lock, which blocks nothing: there, under parallel execution, a class's tests would reset each
 * other's rules and counters mid-test, so they fail at once, saying why, instead of flaking.
 */
final class TurnTaking {
    private static final boolean LOCK_PROVIDERS = present("org.junit.jupiter.api.parallel.ResourceLocksProvider");

    private TurnTaking() {
    }

    static void check(ExtensionContext test) {
        if (LOCK_PROVIDERS || !parallelEnabled(test)) {
            return; // getExecutionMode() (JUnit 5.8) is only asked for under parallel execution
        }
        String problem = problem(test.getExecutionMode(), false, ExtensionContext.class.getPackage().getImplementationVersion());
        if (problem != null) {
            throw new ExtensionConfigurationException(problem);
        }
    }

    /** Why this test cannot run, or null when it can. */
    static String problem(ExecutionMode mode, boolean lockProviders, String junitVersion) {
        if (lockProviders || mode != ExecutionMode.CONCURRENT) {
            return null;
        }
        // the console launcher's standalone jar carries the platform's version (1.10.3 beside Jupiter 5.10.3)
        String jupiter = junitVersion == null ? "an older one" : junitVersion.startsWith("1.") ? "5." + junitVersion.substring(2) : junitVersion;
        return "@BlackPipeTest under JUnit's parallel execution needs JUnit 5.12 or later (this is "
                + jupiter + "): before 5.12 the tests of a class cannot take"
                + " turns on the proxy they share. Upgrade junit-jupiter (or junit-bom) to 5.12+, or run these classes'"
                + " tests one at a time with @Execution(ExecutionMode.SAME_THREAD)";
    }

    private static boolean parallelEnabled(ExtensionContext context) {
        return context.getConfigurationParameter("junit.jupiter.execution.parallel.enabled").map(Boolean::parseBoolean).orElse(false);
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, TurnTaking.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
