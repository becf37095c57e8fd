package io.blackpipe.cli;

import java.time.Instant;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** One line per log record on stderr: time, level, logger, message (and a trace for errors). */
final class LogSetup {
    /**
     * The MongoDB driver's logger (the report runs the driver in this JVM). Without SLF4J the driver
     * logs nothing but one WARNING that says so, at the top of the report's output; only its severe
     * messages are shown. Held here: JUL keeps loggers weakly, and a collected one forgets its level.
     */
    private static final Logger DRIVER = Logger.getLogger("org.mongodb.driver");

    private LogSetup() {
    }

    static void configure() {
        Logger root = Logger.getLogger("");
        for (Handler handler : root.getHandlers()) {
            root.removeHandler(handler);
        }
        ConsoleHandler console = new ConsoleHandler();
        console.setFormatter(new OneLine());
        console.setLevel(Level.ALL);
        root.addHandler(console);
        root.setLevel(Level.INFO);
        DRIVER.setLevel(Level.SEVERE);
    }

    private static final class OneLine extends Formatter {
        @Override
        public String format(LogRecord record) {
            StringBuilder line = new StringBuilder()
                    .append(Instant.ofEpochMilli(record.getMillis())).append(' ')
                    .append(record.getLevel().getName()).append(' ')
                    .append(record.getLoggerName()).append(": ")
                    .append(formatMessage(record)).append(System.lineSeparator());
            if (record.getThrown() != null) {
                java.io.StringWriter trace = new java.io.StringWriter();
                record.getThrown().printStackTrace(new java.io.PrintWriter(trace));
                line.append(trace);
            }
            return line.toString();
        }
    }
}
