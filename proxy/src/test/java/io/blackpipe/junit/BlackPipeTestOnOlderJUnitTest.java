package io.blackpipe.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringWriter;
import java.lang.annotation.Annotation;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * Users' builds pin JUnit versions of their own (Spring Boot 3.4 has 5.11). Before 5.12 ResourceLock had
 * no providers element and value had no default: a @BlackPipeTest whose lock gave no value made the
 * engine fail every class of the user's run with IncompleteAnnotationException, blackpipe's or not.
 */
class BlackPipeTestOnOlderJUnitTest {
    /** ResourceLock as JUnit 5.3 to 5.11 declare it. */
    private static final String RESOURCE_LOCK_BEFORE_5_12 = """
            package org.junit.jupiter.api.parallel;
            import java.lang.annotation.*;
            @Target({ElementType.TYPE, ElementType.METHOD})
            @Retention(RetentionPolicy.RUNTIME)
            @Inherited
            public @interface ResourceLock {
                String value();
                ResourceAccessMode mode() default ResourceAccessMode.READ_WRITE;
            }
            """;

    @Test
    void anOlderJUnitReadsTheLockOfBlackPipeTestAsAReadLockThatBlocksNothing(@TempDir Path stub) throws Exception {
        compile(stub, RESOURCE_LOCK_BEFORE_5_12);
        // the stub first: BlackPipeTest, loaded here, sees the old ResourceLock, as it would on JUnit 5.11
        URL[] classpath = {stub.toUri().toURL(), location(BlackPipeTest.class), location(ExtendWith.class),
                location(AnnotationSupport.class)};
        try (URLClassLoader olderJUnit = new URLClassLoader(classpath, ClassLoader.getPlatformClassLoader())) {
            Class<?> blackPipeTest = olderJUnit.loadClass(BlackPipeTest.class.getName());
            @SuppressWarnings("unchecked")
            Class<? extends Annotation> resourceLock =
                    (Class<? extends Annotation>) olderJUnit.loadClass("org.junit.jupiter.api.parallel.ResourceLock");
            Annotation lock = blackPipeTest.getAnnotation(resourceLock);
            assertNotNull(lock, "@BlackPipeTest carries a ResourceLock an older JUnit reads");
            assertEquals("io.blackpipe.junit.BlackPipeTest", resourceLock.getMethod("value").invoke(lock),
                    "value given (IncompleteAnnotationException without it)");
            assertEquals("READ", resourceLock.getMethod("mode").invoke(lock).toString(),
                    "shared by every @BlackPipeTest class: they still run side by side");
        }
    }

    @Test
    void beforeJUnit512AConcurrentTestIsRefusedSayingWhatToDo() {
        String problem = TurnTaking.problem(ExecutionMode.CONCURRENT, false, "5.11.4");
        assertNotNull(problem);
        assertTrue(problem.contains("needs JUnit 5.12 or later (this is 5.11.4)"), problem);
        assertTrue(problem.contains("@Execution(ExecutionMode.SAME_THREAD)"), problem);
        assertTrue(TurnTaking.problem(ExecutionMode.CONCURRENT, false, "1.10.3").contains("(this is 5.10.3)"),
                "the console launcher's standalone jar names the platform's version, 1.10.3 for Jupiter 5.10.3");
        assertNull(TurnTaking.problem(ExecutionMode.SAME_THREAD, false, "5.11.4"), "tests that run one at a time are fine");
        assertNull(TurnTaking.problem(ExecutionMode.CONCURRENT, true, "5.12.0"), "5.12 makes them take turns");
    }

    private static URL location(Class<?> type) {
        return type.getProtectionDomain().getCodeSource().getLocation();
    }

    private static void compile(Path out, String source) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "a JDK's compiler (the tests run on a JDK)");
        JavaFileObject file = new SimpleJavaFileObject(URI.create("string:///org/junit/jupiter/api/parallel/ResourceLock.java"),
                JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                return source;
            }
        };
        StringWriter errors = new StringWriter();
        String classpath = location(ExtendWith.class).getPath();
        boolean compiled = javac.getTask(errors, null, null, List.of("-d", out.toString(), "-classpath", classpath,
                "-proc:none", "-Xlint:none"), null, List.of(file)).call();
        assertTrue(compiled, errors::toString);
    }
}
