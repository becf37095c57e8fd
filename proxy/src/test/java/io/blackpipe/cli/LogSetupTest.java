package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** What the CLI's log shows: blackpipe's lines, not the MongoDB driver's warning that SLF4J is absent. */
class LogSetupTest {
    @Test
    void theDriversSlf4jWarningStaysOutOfTheLogWhileBlackpipesLinesShow() {
        Logger root = Logger.getLogger("");
        Handler[] before = root.getHandlers();
        Level rootLevel = root.getLevel();
        PrintStream stderr = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try {
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8)); // the ConsoleHandler binds it when made
            LogSetup.configure();
            // as the driver logs it on its first use without SLF4J (com.mongodb.internal.diagnostics.logging.Loggers)
            Logger.getLogger("org.mongodb.driver").warning(
                    "SLF4J not found on the classpath. Logging is disabled for the 'org.mongodb.driver' component");
            Logger.getLogger("org.mongodb.driver.cluster").severe("the driver's severe messages still show");
            // a logger of its own: tests before this one in the JVM may have quieted blackpipe's
            Logger.getLogger("log-setup-test").info("listening on 127.0.0.1:27017");
            for (Handler handler : root.getHandlers()) {
                handler.flush();
            }
        } finally {
            System.setErr(stderr);
            for (Handler handler : root.getHandlers()) {
                root.removeHandler(handler);
            }
            for (Handler handler : before) {
                root.addHandler(handler);
            }
            root.setLevel(rootLevel);
            Logger.getLogger("org.mongodb.driver").setLevel(null);
        }
        String log = captured.toString(StandardCharsets.UTF_8);
        assertFalse(log.contains("SLF4J"), log);
        assertTrue(log.contains("the driver's severe messages still show"), log);
        assertTrue(log.contains("INFO log-setup-test: listening on 127.0.0.1:27017"), log);
    }
}
