package io.blackpipe.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * A test class with a blackpipe in front of its MongoDB: any constructor, test or lifecycle method
 * parameter of type {@link io.blackpipe.BlackPipe} receives it.
 * <pre>{@code
 * @BlackPipeTest(upstream = "mongodb://localhost:27017/?replicaSet=rs0")
 * class CheckoutTest {
 *     @Test
 *     void survivesAFailover(BlackPipe blackPipe) { ... }
 * }
 * }</pre>
 * One proxy per test class, started on first use and closed after all its tests by the extension (a test's
 * {@code close()} on it is an IllegalStateException: the tests after it share it); a {@code @Nested}
 * class shares its enclosing class's unless it carries this annotation itself. Under JUnit's parallel
 * execution the tests of one class take turns (classes still run side by side; before JUnit 5.12, which cannot
 * make them take turns, a test that would run concurrently fails saying so). Before each test
 * its scenario is stopped, outages restored, its counters reset, its history emptied, and its rules
 * put back to those its class set up in {@code @BeforeAll}, fresh; a test's own rules go after it.
 *
 * @see BlackPipeExtension for where the upstream comes from when {@link #upstream()} is empty
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(BlackPipeExtension.class)
// JUnit before 5.12 has no providers and requires value: without one its engine failed every class of the run
// (IncompleteAnnotationException). A lock all classes share to read blocks nothing; providers gives each class its own.
@ResourceLock(value = "io.blackpipe.junit.BlackPipeTest", mode = ResourceAccessMode.READ, providers = OneTestAtATime.class)
public @interface BlackPipeTest {
    /**
     * mongodb:// or mongodb+srv:// URI of the upstream; empty: an enclosing class's annotation's (for a @Nested class), else
     * the system property blackpipe.upstream, else env BLACKPIPE_UPSTREAM.
     */
    String upstream() default "";

    /**
     * The first member's listener port, the next members' port+1, port+2, ..., as the builder's {@code port(n)}: for an
     * application under test whose configuration names a fixed port, or a CI that allows a few known ports only. 0: free
     * ports. A port taken fails the class's tests, naming it.
     */
    int port() default 0;

    /** Present a replica set of this many members (2-7) over a single upstream node; 0: off. */
    int simulateMembers() default 0;

    /** Seed of every random fault decision. */
    long seed() default 0;

    /**
     * The admin HTTP server (/metrics, /health, the control API the CLI uses), on loopback: -1 off, 0 a free
     * port, which {@link io.blackpipe.BlackPipe#adminUrl()} names.
     */
    int adminPort() default -1;

    /** Pass the application's own configureFailPoint commands on to the server instead of taking them as rules. */
    boolean forwardFailPoints() default false;
}
