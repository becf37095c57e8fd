package io.blackpipe.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.net.BindException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A setup run again only for a port taken meanwhile, and only so many times. */
class BindRetryTest {
    @Test
    void aPortTakenMeanwhileRunsTheWholeSetupAgain() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        BindRetry.upTo(3, () -> {
            if (runs.incrementAndGet() == 1) { // as the proxy's start says it: wrapped twice
                throw new IllegalStateException("cannot listen on port 1234",
                        new IllegalStateException("Address already in use", new BindException("Address already in use")));
            }
        });
        assertEquals(2, runs.get());
    }

    @Test
    void anyOtherFailureIsTheTestsAndIsThrownAtOnce() {
        AtomicInteger runs = new AtomicInteger();
        IOException other = new IOException("connection refused");
        assertSame(other, assertThrows(IOException.class, () -> BindRetry.upTo(3, () -> {
            runs.incrementAndGet();
            throw other;
        })));
        AssertionError failed = new AssertionError("expected 3 documents");
        assertSame(failed, assertThrows(AssertionError.class, () -> BindRetry.upTo(3, () -> {
            runs.incrementAndGet();
            throw failed;
        })));
        assertEquals(2, runs.get(), "one run each");
    }

    /** A proxy started as a command says a port taken in its error output: that, and only that, is a BindException. */
    @Test
    void aCommandsOutputSayingOneOfItsPortsWasTakenIsABindException() throws Exception {
        String taken = "blackpipe: cannot listen on port 28017 for member 127.0.0.1:40001: Address already in use (bind address 127.0.0.1)\n";
        BindException e = assertThrows(BindException.class, () -> BindRetry.throwIfTaken("starting\n" + taken, 28016, 28017));
        assertEquals(taken.strip(), e.getMessage());
        BindRetry.throwIfTaken(taken, 28018); // another port: the test's to judge
        BindRetry.throwIfTaken(taken.replace("28017", "280170"), 28017);
        BindRetry.throwIfTaken("blackpipe: cannot listen on port 28017 for member 127.0.0.1:40001: Permission denied", 28017);
        BindRetry.throwIfTaken("blackpipe: cannot start the admin server on 127.0.0.1:28017: Address already in use", 28017);
        AtomicInteger runs = new AtomicInteger();
        BindRetry.upTo(2, () -> BindRetry.throwIfTaken(runs.incrementAndGet() == 1 ? taken : "", 28017));
        assertEquals(2, runs.get(), "run again as a taken port that was thrown");
    }

    @Test
    void aPortTakenEveryTimeFailsWithTheLastFailureAfterTheAttempts() {
        AtomicInteger runs = new AtomicInteger();
        BindException last = assertThrows(BindException.class, () -> BindRetry.upTo(3, () -> {
            throw new BindException("taken, run " + runs.incrementAndGet());
        }));
        assertEquals("taken, run 3", last.getMessage());
        assertEquals(3, runs.get());
        assertThrows(IllegalArgumentException.class, () -> BindRetry.upTo(0, () -> { }));
    }
}
