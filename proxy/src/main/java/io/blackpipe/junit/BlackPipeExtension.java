package io.blackpipe.junit;

import io.blackpipe.BlackPipe;
import io.blackpipe.ManagedBlackPipe;
import io.blackpipe.topology.UpstreamUri;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.TestInstance.Lifecycle;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestInstanceFactoryContext;
import org.junit.jupiter.api.extension.TestInstancePreConstructCallback;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * Gives tests a {@link BlackPipe} (see {@link BlackPipeTest}). The upstream is, in order: the
 * annotation's {@code upstream}, the system property {@value #UPSTREAM_PROPERTY}, the environment
 * variable {@value #UPSTREAM_ENV}. One instance per class that declares {@code @BlackPipeTest} (a
 * {@code @Nested} class without it shares its enclosing class's), started when first asked for,
 * closed after the class's tests (by this extension only: the tests get a {@link ManagedBlackPipe} one, whose
 * close() they cannot call); reset before each test ({@link BlackPipe#reset()}: no scenario, no
 * outage, a simulated set's first member primary again, counters at zero, an empty history, no session
 * remembered from an earlier test) and given
 * back the rules its class set up before its first test (in {@code @BeforeAll}), fresh, and no others.
 * A {@code @Nested} class sharing its enclosing class's proxy gives back, when it ends, the rules in
 * force when it began: its own never reach the next nested class.
 */
public final class BlackPipeExtension
        implements ParameterResolver, TestInstancePreConstructCallback, BeforeAllCallback, BeforeEachCallback, AfterEachCallback,
        AfterAllCallback {
    public static final String UPSTREAM_PROPERTY = "blackpipe.upstream";
    public static final String UPSTREAM_ENV = "BLACKPIPE_UPSTREAM";

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(BlackPipeExtension.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == BlackPipe.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        ExtensionContext owner = owner(context);
        return owner.getStore(NAMESPACE).getOrComputeIfAbsent(proxyKey(owner), key -> start(owner), ManagedBlackPipe.class)
                .blackPipe();
    }

    /**
     * A @Nested class that shares an enclosing class's proxy notes the rules in force as it starts (its
     * enclosing classes' own), to give them back when it ends: the rules its @BeforeAll adds must not
     * become the next nested class's.
     */
    @Override
    public void beforeAll(ExtensionContext context) {
        noteTheRulesBefore(context);
    }

    /**
     * Under @TestInstance(PER_CLASS) JUnit makes the instance before any before-all callback: its constructor's rules
     * come after. Under PER_METHOD it makes one per test, before the before-each callbacks: its constructor's rules
     * are that test's own, which the reset before it must give back (noted here: the rules in force without them). For
     * a @Nested class's test it makes each PER_METHOD enclosing class's instance first, in that class's context: their
     * constructors' rules are the test's own too, so the note made before the outermost of them is the test's.
     */
    @Override
    public void preConstructTestInstance(TestInstanceFactoryContext factoryContext, ExtensionContext context) {
        ExtensionContext classContext = classContext(context);
        if (!classContext.getTestClass().map(factoryContext.getTestClass()::equals).orElse(false)) {
            return; // an enclosing instance made in its nested class's context: not this JUnit's default
        }
        noteTheRulesBefore(classContext);
        if (classContext.getTestInstanceLifecycle().orElse(Lifecycle.PER_METHOD) == Lifecycle.PER_METHOD) {
            List<String> beforeTheEnclosing = factoryContext.getOuterInstance().isPresent() ? takeTheEnclosingNote(classContext) : null;
            BlackPipe blackPipe = running(classContext);
            classContext.getStore(NAMESPACE).put(rulesBeforeTheInstanceKey(classContext), beforeTheEnclosing != null ? beforeTheEnclosing
                    : blackPipe == null ? List.of() : blackPipe.rules());
        }
    }

    /**
     * The rules noted before the outermost enclosing instance made for this one, taken (made for it, they are no other
     * test's); null when none was (a PER_CLASS enclosing class made its instance once), or when the enclosing class's
     * rules go to another proxy (this class declares @BlackPipeTest itself).
     */
    @SuppressWarnings("unchecked")
    private static List<String> takeTheEnclosingNote(ExtensionContext classContext) {
        String owner = owner(classContext).getUniqueId();
        List<String> noted = null;
        Optional<ExtensionContext> enclosing = classContext.getParent();
        while (enclosing.isPresent() && enclosing.get().getTestClass().isPresent()) {
            ExtensionContext outer = enclosing.get();
            List<String> note = outer.getStore(NAMESPACE).remove(rulesBeforeTheInstanceKey(outer), List.class);
            if (note != null && owner(outer).getUniqueId().equals(owner)) {
                noted = note; // the outermost's is the earliest
            }
            enclosing = outer.getParent();
        }
        return noted;
    }

    /** Once per class (the first of its pre-construct and before-all callbacks), for a class sharing an enclosing proxy. */
    private static void noteTheRulesBefore(ExtensionContext classContext) {
        if (sharesAnEnclosingProxy(classContext)) {
            BlackPipe blackPipe = running(classContext);
            classContext.getStore(NAMESPACE).getOrComputeIfAbsent(rulesBeforeKey(classContext),
                    key -> blackPipe == null ? List.of() : blackPipe.rules(), List.class);
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public void beforeEach(ExtensionContext context) {
        TurnTaking.check(context);
        BlackPipe blackPipe = running(context);
        ExtensionContext classContext = classContext(context);
        List<String> beforeTheInstance = classContext.getStore(NAMESPACE).remove(rulesBeforeTheInstanceKey(classContext), List.class);
        List<String> classRules = classContext.getStore(NAMESPACE).getOrComputeIfAbsent(classRulesKey(classContext),
                key -> blackPipe == null ? List.of() : setUpBeforeTheFirstTest(blackPipe, beforeTheInstance), List.class);
        if (blackPipe != null) {
            List<String> constructors = beforeTheInstance == null ? List.of()
                    : blackPipe.rules().stream().filter(rule -> !beforeTheInstance.contains(rule)).toList();
            blackPipe.reset();
            classRules.forEach(blackPipe::rule);
            constructors.forEach(blackPipe::rule); // by the ids the constructor was given
        }
    }

    /**
     * The test's own rules go now, not only before the next test: a {@code @Nested} class's first
     * test takes the rules it finds as its class's, and must not find the enclosing class's last test's.
     */
    @Override
    @SuppressWarnings("unchecked")
    public void afterEach(ExtensionContext context) {
        ManagedBlackPipe blackPipe = runningManaged(context);
        ExtensionContext classContext = classContext(context);
        List<String> classRules = classContext.getStore(NAMESPACE).get(classRulesKey(classContext), List.class);
        if (blackPipe != null && classRules != null) {
            blackPipe.giveBackRules(classRules); // ids start over: the next test's constructor gets those it gets alone
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public void afterAll(ExtensionContext context) {
        if (sharesAnEnclosingProxy(context)) {
            ManagedBlackPipe blackPipe = runningManaged(context);
            List<String> before = context.getStore(NAMESPACE).get(rulesBeforeKey(context), List.class);
            if (blackPipe != null && before != null) {
                blackPipe.giveBackRules(before);
            }
            return;
        }
        // remove() looks in this class's own store only: a @Nested class never closes its outer class's proxy
        ManagedBlackPipe blackPipe;
        try {
            blackPipe = context.getStore(NAMESPACE).remove(proxyKey(context), ManagedBlackPipe.class);
        } catch (ExtensionConfigurationException startFailed) {
            return; // the store gives back the failure of start(): the tests that asked for the proxy reported it
        }
        if (blackPipe != null) {
            blackPipe.close(); // the tests' BlackPipe.close() refuses: they share it
        }
    }

    /** The proxy the test's class uses, if it has started (not if its start failed: the test asking for it reports that). */
    private static BlackPipe running(ExtensionContext context) {
        ManagedBlackPipe managed = runningManaged(context);
        return managed == null ? null : managed.blackPipe();
    }

    private static ManagedBlackPipe runningManaged(ExtensionContext context) {
        ExtensionContext owner = owner(context);
        try {
            return owner.getStore(NAMESPACE).get(proxyKey(owner), ManagedBlackPipe.class);
        } catch (ExtensionConfigurationException startFailed) {
            return null; // the store gives back the failure of start() on every read
        }
    }

    /**
     * The rules a class set up before its first test (in @BeforeAll, or a @TestInstance(PER_CLASS)
     * constructor), as failCommand JSON; a scenario started there is stopped, as before every test.
     *
     * @param beforeTheInstance under PER_METHOD, the rules in force before the first test's instance was made (its
     *                          constructor's are the test's own), else null
     */
    private static List<String> setUpBeforeTheFirstTest(BlackPipe blackPipe, List<String> beforeTheInstance) {
        blackPipe.stopScenario();
        List<String> rules = blackPipe.rules();
        return beforeTheInstance == null ? rules : rules.stream().filter(beforeTheInstance::contains).toList();
    }

    /** Each class's own, never an enclosing class's (store lookups also search the enclosing classes'). */
    private static String classRulesKey(ExtensionContext classContext) {
        return "rules of " + classContext.getUniqueId();
    }

    private static String rulesBeforeTheInstanceKey(ExtensionContext classContext) {
        return "rules before the instance of " + classContext.getUniqueId();
    }

    private static String rulesBeforeKey(ExtensionContext classContext) {
        return "rules before " + classContext.getUniqueId();
    }

    /** A @Nested class without @BlackPipeTest of its own: its tests use an enclosing class's proxy. */
    private static boolean sharesAnEnclosingProxy(ExtensionContext classContext) {
        return !owner(classContext).getUniqueId().equals(classContext.getUniqueId());
    }

    /** A key that an enclosing class's store never holds, as store lookups also search the enclosing classes'. */
    private static String proxyKey(ExtensionContext owner) {
        return "blackPipe of " + owner.getUniqueId();
    }

    private static ExtensionContext classContext(ExtensionContext context) {
        ExtensionContext current = context;
        while (current.getTestMethod().isPresent() && current.getParent().isPresent()) {
            current = current.getParent().get();
        }
        return current;
    }

    /** The nearest class that declares @BlackPipeTest, with its own options; else the outermost test class. */
    private static ExtensionContext owner(ExtensionContext context) {
        ExtensionContext current = classContext(context);
        while (!declaresBlackPipeTest(current)) {
            Optional<ExtensionContext> enclosing = current.getParent().filter(parent -> parent.getTestClass().isPresent());
            if (enclosing.isEmpty()) {
                return current;
            }
            current = enclosing.get();
        }
        return current;
    }

    private static boolean declaresBlackPipeTest(ExtensionContext classContext) {
        return classContext.getTestClass().map(c -> AnnotationSupport.isAnnotated(c, BlackPipeTest.class)).orElse(false);
    }

    private static ManagedBlackPipe start(ExtensionContext classContext) {
        Optional<BlackPipeTest> annotation = annotation(classContext.getTestClass().orElse(null));
        String upstream = upstream(annotatedUpstream(classContext.getTestClass().orElse(null)));
        try {
            return BlackPipe.builder()
                    .upstream(upstream)
                    .port(annotation.map(BlackPipeTest::port).orElse(0))
                    .simulateMembers(annotation.map(BlackPipeTest::simulateMembers).orElse(0))
                    .seed(annotation.map(BlackPipeTest::seed).orElse(0L))
                    .adminPort(annotation.map(BlackPipeTest::adminPort).orElse(-1))
                    .forwardFailPoints(annotation.map(BlackPipeTest::forwardFailPoints).orElse(false))
                    .startManaged(closedBy(classContext));
        } catch (RuntimeException e) {
            // test reports end up in CI logs: never the upstream's password
            throw new ExtensionConfigurationException("blackpipe could not start in front of " + UpstreamUri.masked(upstream)
                    + ": " + e.getMessage(), e);
        }
    }

    /** Completes "close(): this BlackPipe is closed by ...": a test closing the proxy its class shares would break the next. */
    static String closedBy(ExtensionContext classContext) {
        return "the @BlackPipeTest extension after the tests of " + classContext.getTestClass().map(Class::getName).orElse("its class")
                + ", which share it: leave it open (a test that needs a proxy of its own starts one, BlackPipe.start(uri))";
    }

    /** The annotation on the class or, for @Nested classes, on the nearest enclosing class. */
    private static Optional<BlackPipeTest> annotation(Class<?> testClass) {
        for (Class<?> c = testClass; c != null; c = c.getEnclosingClass()) {
            Optional<BlackPipeTest> found = AnnotationSupport.findAnnotation(c, BlackPipeTest.class);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /**
     * The upstream the nearest annotation that names one gives: a @Nested class annotated for options of its own
     * (simulateMembers) runs in front of its enclosing class's upstream, not only of the property's or variable's.
     */
    private static String annotatedUpstream(Class<?> testClass) {
        for (Class<?> c = testClass; c != null; c = c.getEnclosingClass()) {
            Optional<BlackPipeTest> found = AnnotationSupport.findAnnotation(c, BlackPipeTest.class);
            if (found.isPresent() && !found.get().upstream().isBlank()) {
                return found.get().upstream();
            }
        }
        return "";
    }

    static String upstream(String fromAnnotation) {
        if (!fromAnnotation.isBlank()) {
            return fromAnnotation;
        }
        String property = System.getProperty(UPSTREAM_PROPERTY);
        if (property != null && !property.isBlank()) {
            return property;
        }
        String env = System.getenv(UPSTREAM_ENV);
        if (env != null && !env.isBlank()) {
            return env;
        }
        throw new ExtensionConfigurationException("@BlackPipeTest has no upstream: set @BlackPipeTest(upstream = \"mongodb://...\"), "
                + "the system property " + UPSTREAM_PROPERTY + " or the environment variable " + UPSTREAM_ENV);
    }
}
