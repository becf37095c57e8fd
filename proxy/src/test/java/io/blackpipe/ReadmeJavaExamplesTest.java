package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.blackpipe.junit.BlackPipeExtension;
import io.blackpipe.testing.UpstreamLane;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * The README's Java examples compile against the API as it is, and the in-process and JUnit ones run
 * as written against the test lane's upstream: a user copies them first, and a renamed method, a
 * changed signature or an example that throws must fail here, not in their IDE. Only the example's
 * upstream URI and scenario file are swapped for the lane's and a temporary one. The Testcontainers
 * example needs Docker: it is compiled here and run by BlackPipeContainerTest's lane.
 */
class ReadmeJavaExamplesTest {
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL);
    private static final String README_UPSTREAM = "mongodb://localhost:27017/?replicaSet=rs0";
    private static final String README_SCENARIO = "src/test/resources/my-scenario.yaml";
    private static final String IMPORTS = """
            import static org.junit.jupiter.api.Assertions.*;
            import com.mongodb.client.*;
            import com.mongodb.client.model.Filters;
            import io.blackpipe.*;
            import io.blackpipe.fault.Direction;
            import io.blackpipe.fault.IdleTimeout;
            import io.blackpipe.junit.*;
            import io.blackpipe.testcontainers.*;
            import java.nio.file.Path;
            import java.time.Duration;
            import org.bson.BsonDocument;
            import org.bson.Document;
            import org.junit.jupiter.api.Test;
            import org.testcontainers.containers.Network;
            import org.testcontainers.mongodb.MongoDBContainer;
            """;
    /** The application code the JUnit example calls. */
    private static final String SHOP = """
            package readme;
            import com.mongodb.client.*;
            import org.bson.Document;
            public final class Shop {
                public static void checkout(String connectionString) {
                    try (MongoClient client = MongoClients.create(connectionString)) {
                        client.getDatabase("shop").getCollection("orders").insertOne(new Document("order", 1));
                    }
                }
            }
            """;

    @Test
    void everyJavaExampleOfTheReadmeCompiles(@TempDir Path out) throws Exception {
        List<Example> examples = examples();
        assertTrue(examples.size() >= 3, "the README's in-process, JUnit and Testcontainers examples: found " + examples.size());
        List<JavaFileObject> sources = new ArrayList<>();
        StringBuilder where = new StringBuilder();
        for (int i = 0; i < examples.size(); i++) {
            sources.add(source("ReadmeExample" + i, nestedExample("ReadmeExample" + i, examples.get(i).code())));
            where.append("ReadmeExample").append(i).append(": the block at README.md line ").append(examples.get(i).line()).append('\n');
        }
        compile(out, sources, where.toString());
    }

    /** The snippet a user pastes into their POM names this build, version included, not one that went before. */
    @Test
    void theDependencySnippetNamesThisBuild() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        Matcher snippet = Pattern.compile("```xml\n<dependency>\n  <groupId>(.*?)</groupId>\n  <artifactId>(.*?)</artifactId>\n"
                + "  <version>(.*?)</version>\n  <scope>test</scope>\n</dependency>\n```").matcher(readme);
        assertTrue(snippet.find(), "README.md shows the test-scoped <dependency> to add");
        String pom = Files.readString(Path.of("pom.xml"));
        String parent = pom.substring(pom.indexOf("<parent>"), pom.indexOf("</parent>"));
        String own = pom.substring(pom.indexOf("</parent>"));
        assertEquals(between(parent, "groupId") + ":" + between(own, "artifactId") + ":" + between(parent, "version"),
                snippet.group(1) + ":" + snippet.group(2) + ":" + snippet.group(3));
    }

    private static String between(String xml, String tag) {
        return xml.substring(xml.indexOf("<" + tag + ">") + tag.length() + 2, xml.indexOf("</" + tag + ">"));
    }

    @Test
    void theInProcessExampleRunsAsWritten(@TempDir Path dir) throws Throwable {
        String block = exampleStartingWith("try (BlackPipe blackPipe = BlackPipe.start(");
        Path scenario = dir.resolve("my-scenario.yaml");
        try (InputStream bundled = getClass().getResourceAsStream("/fault-scripts/slow-primary.yaml")) {
            Files.copy(bundled, scenario);
        }
        String runnable = replaceOnce(replaceOnce(block, README_UPSTREAM, UpstreamLane.uri()), README_SCENARIO, scenario.toString());
        Class<?> example = compileAndLoad(dir, List.of(source("InProcessExample", "package readme;\n" + IMPORTS
                + "public class InProcessExample {\npublic static void run() throws Exception {\n" + runnable + "}\n}\n")))
                .loadClass("readme.InProcessExample");
        try {
            example.getMethod("run").invoke(null);
        } catch (InvocationTargetException e) {
            throw e.getCause(); // the example's own exception or assertion, not reflection's wrapper
        }
    }

    @Test
    void theJUnitExampleRunsAsWritten(@TempDir Path dir) throws Exception {
        String block = exampleStartingWith("@BlackPipeTest");
        Matcher declared = Pattern.compile("class (\\w+)").matcher(block);
        assertTrue(declared.find(), "the JUnit example declares its test class:\n" + block);
        String name = declared.group(1);
        ClassLoader loader = compileAndLoad(dir, List.of(source("Shop", SHOP),
                source(name, "package readme;\n" + IMPORTS + "import static readme.Shop.checkout;\n" + block)));

        // as the example's comment says to run it: -Dblackpipe.upstream=...
        String previous = System.setProperty(BlackPipeExtension.UPSTREAM_PROPERTY, UpstreamLane.uri());
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        try {
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                    .selectors(selectClass(loader.loadClass("readme." + name))).build(), listener);
        } finally {
            if (previous == null) {
                System.clearProperty(BlackPipeExtension.UPSTREAM_PROPERTY);
            } else {
                System.setProperty(BlackPipeExtension.UPSTREAM_PROPERTY, previous);
            }
        }
        TestExecutionSummary summary = listener.getSummary();
        StringWriter failures = new StringWriter();
        summary.printFailuresTo(new PrintWriter(failures), 10);
        assertEquals(0, summary.getTotalFailureCount(), failures::toString);
        assertEquals(1, summary.getTestsSucceededCount(), "the example's one test ran and passed");
    }

    /** A ```java block of the README and the line it starts on. */
    private record Example(String code, long line) {
    }

    private static List<Example> examples() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        List<Example> examples = new ArrayList<>();
        Matcher matcher = JAVA_BLOCK.matcher(readme);
        while (matcher.find()) {
            long line = readme.substring(0, matcher.start()).chars().filter(c -> c == '\n').count() + 1;
            examples.add(new Example(matcher.group(1), line));
        }
        return examples;
    }

    private static String exampleStartingWith(String start) throws Exception {
        List<String> found = examples().stream().map(Example::code).filter(code -> code.startsWith(start)).toList();
        assertEquals(1, found.size(), "README.md has one ```java block starting with " + start);
        return found.get(0);
    }

    /** {@code text} with {@code literal}, which it must hold exactly once, replaced: the example must not drift from it. */
    private static String replaceOnce(String text, String literal, String replacement) {
        int at = text.indexOf(literal);
        assertTrue(at >= 0 && text.indexOf(literal, at + 1) < 0, "the example names " + literal + " once:\n" + text);
        return text.substring(0, at) + replacement + text.substring(at + literal.length());
    }

    /**
     * One example as a compilation unit. A block declaring a class (the JUnit example) becomes a
     * nested class, beside the application method it calls; any other becomes a method body.
     */
    private static String nestedExample(String name, String block) {
        boolean declaresAClass = Pattern.compile("(?m)^\\s*(@\\w+.*\\n\\s*)*class \\w+").matcher(block).find();
        String body = declaresAClass
                ? "static void checkout(String connectionString) { } // the application's own code\n" + block
                : "void example() throws Exception {\n" + block + "}\n";
        return "package readme;\n" + IMPORTS + "class " + name + " {\n" + body + "}\n";
    }

    private static JavaFileObject source(String name, String text) {
        return new SimpleJavaFileObject(URI.create("string:///readme/" + name + ".java"), JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                return text;
            }
        };
    }

    private static void compile(Path out, List<JavaFileObject> sources, String where) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "a JDK's compiler (the tests run on a JDK)");
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        StringWriter errors = new StringWriter();
        boolean compiled = javac.getTask(errors, null, null,
                List.of("-d", out.toString(), "-classpath", classpath, "-proc:none", "-Xlint:none"), null, sources).call();
        assertTrue(compiled, "README.md's Java examples do not compile:\n" + where + errors);
    }

    private static ClassLoader compileAndLoad(Path dir, List<JavaFileObject> sources) throws Exception {
        Path out = Files.createDirectories(dir.resolve("classes"));
        compile(out, sources, "");
        return new URLClassLoader(new URL[] {out.toUri().toURL()}, ReadmeJavaExamplesTest.class.getClassLoader());
    }
}
