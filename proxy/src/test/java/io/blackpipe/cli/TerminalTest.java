package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the CLI tells a terminal (progress redrawn in place) from a log, a file or a pipe (one line each),
 * on any Java: the stream's own device where the system shows it, else the JVM's console.
 */
class TerminalTest {
    /** A console as Java 22+ has it: present off a terminal too, and saying so. */
    public static final class Java22Console {
        private final boolean terminal;

        Java22Console(boolean terminal) {
            this.terminal = terminal;
        }

        public boolean isTerminal() {
            return terminal;
        }
    }

    /** A console as Java 17 to 21 have it: no isTerminal(), and present only on a terminal. */
    public static final class Java17Console {
    }

    @Test
    void aJava22ConsoleOffATerminalIsNoTerminal() {
        assertFalse(Terminal.console(new Java22Console(false), Java22Console.class), "a console is no terminal on Java 22+");
        assertTrue(Terminal.console(new Java22Console(true), Java22Console.class));
    }

    @Test
    void beforeJava22AConsoleMeansATerminal() {
        assertTrue(Terminal.console(new Java17Console(), Java17Console.class));
        assertFalse(Terminal.console(null, Java17Console.class));
        assertFalse(Terminal.console(null, Java22Console.class));
    }

    @Test
    void aDescriptorIsATerminalWhenItLeadsToATerminalDevice(@TempDir Path temp) throws Exception {
        assertEquals(Boolean.TRUE, descriptorTo(temp, "/dev/pts/3"));
        assertEquals(Boolean.TRUE, descriptorTo(temp, "/dev/tty1"));
        assertEquals(Boolean.FALSE, descriptorTo(temp, "pipe:[4242]"));
        assertEquals(Boolean.FALSE, descriptorTo(temp, temp.resolve("ci.log").toString()));
        assertEquals(Boolean.FALSE, descriptorTo(temp, "/dev/null"));
        assertNull(Terminal.isTerminalDevice(temp.resolve("no-such-descriptor")), "unknown: the console answers");
    }

    /** What Terminal makes of a /proc/self/fd entry leading to {@code target}. */
    private static Boolean descriptorTo(Path temp, String target) throws Exception {
        Path link = Files.createSymbolicLink(temp.resolve("fd"), Path.of(target));
        try {
            return Terminal.isTerminalDevice(link);
        } finally {
            Files.delete(link);
        }
    }

    /** Surefire gives this JVM pipes, never a terminal. */
    @Test
    void thisTestsStandardErrorIsNoTerminal() {
        assertFalse(Terminal.stderr());
    }
}
