package io.blackpipe.report;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * A fault of the report (its columns), defined by a scenario in fault-scripts/report/, which
 * travels inside the jar.
 *
 * @param perOperation the scenario's rules are armed afresh before every increment (so each
 *                     increment meets the fault once); otherwise the scenario runs for the cell
 */
record FaultColumn(String name, String resource, boolean perOperation, boolean slow) {
    static FaultColumn[] all() {
        return new FaultColumn[] {
            new FaultColumn("reset before apply", "reset-before-apply", true, false),
            new FaultColumn("reply lost after apply", "reply-lost-after-apply", true, false),
            new FaultColumn("persistent outage", "persistent-outage", false, true),
            new FaultColumn("command error", "command-error", false, false),
            new FaultColumn("NotWritablePrimary", "not-writable-primary", true, false),
        };
    }

    String path() {
        return "fault-scripts/report/" + resource + ".yaml";
    }

    String text() {
        try (InputStream in = FaultColumn.class.getClassLoader().getResourceAsStream(path())) {
            if (in == null) {
                throw new IllegalStateException("the report scenario " + path() + " is missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
