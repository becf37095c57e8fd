package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** What the CLI sets before anything else runs. */
class MainTest {
    @Test
    void theCliRunsWithoutNettysLeakDetectorUnlessTheUserAsksForIt() {
        String before = System.getProperty(Main.LEAK_DETECTION); // the test JVM's: paranoid
        try {
            System.setProperty(Main.LEAK_DETECTION, "advanced");
            Main.runWithoutLeakDetectionUnlessAsked();
            assertEquals("advanced", System.getProperty(Main.LEAK_DETECTION), "a level the user gave is kept");

            System.clearProperty(Main.LEAK_DETECTION);
            Main.runWithoutLeakDetectionUnlessAsked();
            assertEquals("disabled", System.getProperty(Main.LEAK_DETECTION));
        } finally {
            // Netty read the level when it loaded; restoring the property keeps the JVM as it was
            if (before == null) {
                System.clearProperty(Main.LEAK_DETECTION);
            } else {
                System.setProperty(Main.LEAK_DETECTION, before);
            }
        }
    }
}
