package io.blackpipe.junit;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLocksProvider;

/**
 * The tests of a @BlackPipeTest class share its proxy, which each test resets: under JUnit's parallel
 * execution they take turns. The lock is the class's own, so the classes, each with its own proxy,
 * still run side by side (and holding it, JUnit runs the class's tests and nested classes on one thread).
 */
final class OneTestAtATime implements ResourceLocksProvider {
    @Override
    public Set<Lock> provideForClass(Class<?> testClass) {
        return lockOf(testClass);
    }

    @Override
    public Set<Lock> provideForNestedClass(List<Class<?>> enclosingInstanceTypes, Class<?> testClass) {
        return lockOf(testClass);
    }

    private static Set<Lock> lockOf(Class<?> testClass) {
        return Set.of(new Lock(BlackPipeTest.class.getName() + ":" + testClass.getName(), ResourceAccessMode.READ_WRITE));
    }
}
