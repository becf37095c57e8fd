package io.blackpipe.junit;

import io.blackpipe.BlackPipe;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * Gives tests a {@link BlackPipe} (see {@link BlackPipeTest}). The upstream is, in order: the
 * annotation's {@code upstream}, the system property {@value #UPSTREAM_PROPERTY}, the environment
 * variable {@value #UPSTREAM_ENV}. One instance per test class (a {@code @Nested} class shares its
 * outer class's once that has one), started when first asked for, closed after the class's tests;
 * reset before each test ({@link BlackPipe#reset()}: no rules, no scenario, no outage, counters at zero,
 * an empty history, no session remembered from an earlier test).
 */
public final class BlackPipeExtension implements ParameterResolver, BeforeEachCallback, AfterAllCallback {
    public static final String UPSTREAM_PROPERTY = "blackpipe.upstream";
    public static final String UPSTREAM_ENV = "BLACKPIPE_UPSTREAM";

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(BlackPipeExtension.class);
    private static final String KEY = "blackPipe";

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == BlackPipe.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        ExtensionContext owner = classContext(context);
        return owner.getStore(NAMESPACE).getOrComputeIfAbsent(KEY, key -> start(owner), BlackPipe.class);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        BlackPipe blackPipe = classContext(context).getStore(NAMESPACE).get(KEY, BlackPipe.class);
        if (blackPipe != null) {
            blackPipe.reset();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        // remove() looks in this class's own store only: a @Nested class never closes its outer class's proxy
        BlackPipe blackPipe = context.getStore(NAMESPACE).remove(KEY, BlackPipe.class);
        if (blackPipe != null) {
            blackPipe.close();
        }
    }

    private static ExtensionContext classContext(ExtensionContext context) {
        ExtensionContext current = context;
        while (current.getTestMethod().isPresent() && current.getParent().isPresent()) {
            current = current.getParent().get();
        }
        return current;
    }

    private static BlackPipe start(ExtensionContext classContext) {
        Optional<BlackPipeTest> annotation = annotation(classContext.getTestClass().orElse(null));
        String upstream = upstream(annotation.map(BlackPipeTest::upstream).orElse(""));
        try {
            return BlackPipe.builder()
                    .upstream(upstream)
                    .simulateMembers(annotation.map(BlackPipeTest::simulateMembers).orElse(0))
                    .seed(annotation.map(BlackPipeTest::seed).orElse(0L))
                    .start();
        } catch (RuntimeException e) {
            throw new ExtensionConfigurationException("blackpipe could not start in front of " + upstream + ": " + e.getMessage(), e);
        }
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
