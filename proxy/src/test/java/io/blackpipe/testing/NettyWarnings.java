package io.blackpipe.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * What Netty warns of (or worse: a task that threw, a leak) while this is open, for tests that a close, a race or a
 * churn ends quietly. Netty logs through java.util.logging here (no SLF4J binding).
 */
public final class NettyWarnings extends Handler implements AutoCloseable {
    /** Held strongly: java.util.logging keeps loggers only weakly. */
    private static final Logger NETTY = Logger.getLogger("io.netty");
    private final List<String> said = new CopyOnWriteArrayList<>();

    private NettyWarnings() {
    }

    public static NettyWarnings capture() {
        NettyWarnings warnings = new NettyWarnings();
        NETTY.addHandler(warnings);
        return warnings;
    }

    /** Each warning so far: its logger, its message, and its exception when it has one. */
    public List<String> said() {
        return List.copyOf(said);
    }

    @Override
    public void publish(LogRecord record) {
        if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
            said.add(record.getLoggerName() + ": " + record.getMessage() + (record.getThrown() == null ? "" : " " + record.getThrown()));
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        NETTY.removeHandler(this);
    }
}
