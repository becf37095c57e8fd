package io.blackpipe.cli;

import java.io.Console;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether the CLI's progress (on standard error) goes to a terminal, where a line may be redrawn in place
 * with a carriage return and an erase-line escape; anywhere else (a CI log, a file, a pipe) those escapes
 * garble the text.
 *
 * <p>{@code System.console() != null} is no answer on its own: from Java 22 (JLine's console) it returns a
 * Console with the output redirected too, and on any Java it asks about standard input and output, not
 * standard error: {@code report 2>progress.log} at a terminal has a console, and its log got the escapes.
 * So the stream itself is asked where the system says what it is (Linux: {@code /proc/self/fd/2}), else
 * {@code Console.isTerminal()} where the JVM has it (Java 22+; called reflectively, as blackpipe runs on 17),
 * else whether there is a console (up to Java 21 there is one only when input and output are a terminal).
 */
final class Terminal {
    private static final Path STDERR = Path.of("/proc/self/fd/2");

    private Terminal() {
    }

    /** Whether standard error is a terminal. */
    static boolean stderr() {
        Boolean device = isTerminalDevice(STDERR);
        return device != null ? device : console(System.console(), Console.class);
    }

    /**
     * Whether the file descriptor link {@code fd} (a /proc/self/fd entry) leads to a terminal device; null when
     * that cannot be read (no /proc: not Linux), and the console has to answer.
     */
    static Boolean isTerminalDevice(Path fd) {
        String target;
        try {
            target = Files.readSymbolicLink(fd).toString();
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return null;
        }
        return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty") || target.equals("/dev/console");
    }

    /**
     * What the JVM's console says: {@code isTerminal()} when {@code type} (java.io.Console) has it (Java 22+,
     * where a console exists off a terminal too), else whether there is a {@code console} at all.
     */
    static boolean console(Object console, Class<?> type) {
        if (console == null) {
            return false;
        }
        Method isTerminal;
        try {
            isTerminal = type.getMethod("isTerminal");
        } catch (NoSuchMethodException e) {
            return true; // Java 21 or older: a console only on a terminal
        }
        try {
            return Boolean.TRUE.equals(isTerminal.invoke(console));
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false; // cannot tell: one line per step is readable anywhere, redrawing is not
        }
    }
}
