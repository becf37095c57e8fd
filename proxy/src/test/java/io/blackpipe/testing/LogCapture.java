package io.blackpipe.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * Collects the records of the proxy's logger ("blackpipe", reached through System.Logger, which
 * the JDK backs with java.util.logging) while it is open. Records of every proxy in the JVM
 * arrive here, so tests pick theirs by content (a client's port, a member's address).
 */
public final class LogCapture extends Handler implements AutoCloseable {
    /** Held strongly: java.util.logging keeps loggers only weakly, and a collected logger loses its handlers. */
    private static final Logger BLACKPIPE = Logger.getLogger("blackpipe");

    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final SimpleFormatter formatter = new SimpleFormatter();
    /** The logger's level before: an earlier test in this JVM may have quieted it (the report sets WARNING). */
    private final Level levelBefore;

    private LogCapture() {
        setLevel(Level.ALL);
        levelBefore = BLACKPIPE.getLevel();
    }

    public static LogCapture start() {
        LogCapture capture = new LogCapture();
        BLACKPIPE.setLevel(Level.INFO); // the proxy's info lines are what most captures wait for
        BLACKPIPE.addHandler(capture);
        return capture;
    }

    @Override
    public void publish(LogRecord record) {
        records.add(record);
    }

    /** Every message so far, formatted (parameters filled in). */
    public List<String> messages() {
        List<String> out = new ArrayList<>();
        for (LogRecord record : records) {
            out.add(formatter.formatMessage(record));
        }
        return out;
    }

    /** The messages so far logged at {@code level}, formatted. */
    public List<String> messagesAt(Level level) {
        List<String> out = new ArrayList<>();
        for (LogRecord record : records) {
            if (record.getLevel().equals(level)) {
                out.add(formatter.formatMessage(record));
            }
        }
        return out;
    }

    /**
     * Whether the proxy told a member's difference from mongod: in full ({@code said}), or by its name
     * ({@code difference}, MemberQuirks' accessor) among those told earlier in this process (a member's differences are
     * told in full once per process, and other tests of this JVM start proxies in front of the lane's member too).
     */
    public boolean toldOfAMember(String said, String difference) {
        Pattern toldEarlier = Pattern.compile("(member \\S+|the real node) differs from mongod in .* told earlier in this process"
                + " \\((?:.*, )?" + Pattern.quote(difference) + "(?:, .*)?\\), .*");
        return messages().stream().anyMatch(m -> m.contains(said) || toldEarlier.matcher(m).matches());
    }

    /** Waits up to {@code timeout} for a message matching {@code wanted} and returns it. */
    public String await(Predicate<String> wanted, Duration timeout, String description) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            for (String message : messages()) {
                if (wanted.test(message)) {
                    return message;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no log line " + description + " within " + timeout + "; the blackpipe log said:\n  "
                        + String.join("\n  ", messages()));
            }
            Thread.sleep(10);
        }
    }

    /** Waits for a message that contains every one of {@code parts}. */
    public String awaitContaining(Duration timeout, String... parts) throws InterruptedException {
        return await(m -> {
            for (String part : parts) {
                if (!m.contains(part)) {
                    return false;
                }
            }
            return true;
        }, timeout, "containing all of " + List.of(parts));
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        BLACKPIPE.removeHandler(this);
        BLACKPIPE.setLevel(levelBefore);
    }
}
