package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringWriter;
import java.net.URI;
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

/**
 * The README's Java examples compile against the API as it is: a user copies them first, and a
 * renamed method or a changed signature must fail here, not in their IDE. Each ```java block is
 * compiled with the imports a user would add: a block that declares a class as a nested class, any
 * other as a method body. What the examples do is proven by the tests of each API (BlackPipeApiTest,
 * BlackPipeExtensionTest, RemoteBlackPipeTest, BlackPipeContainerTest).
 */
class ReadmeJavaExamplesTest {
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL);
    private static final String IMPORTS = """
            import static org.junit.jupiter.api.Assertions.*;
            import com.mongodb.client.*;
            import io.blackpipe.*;
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

    @Test
    void everyJavaExampleOfTheReadmeCompiles(@TempDir Path out) throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        List<String> blocks = new ArrayList<>();
        StringBuilder where = new StringBuilder();
        Matcher matcher = JAVA_BLOCK.matcher(readme);
        while (matcher.find()) {
            long line = readme.substring(0, matcher.start()).chars().filter(c -> c == '\n').count() + 1;
            where.append("ReadmeExample").append(blocks.size()).append(": the block at README.md line ").append(line).append('\n');
            blocks.add(matcher.group(1));
        }
        assertTrue(blocks.size() >= 3, "the README's in-process, JUnit and Testcontainers examples: found " + blocks.size());

        List<JavaFileObject> sources = new ArrayList<>();
        for (int i = 0; i < blocks.size(); i++) {
            sources.add(source("ReadmeExample" + i, blocks.get(i)));
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "a JDK's compiler (the tests run on a JDK)");
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        StringWriter errors = new StringWriter();
        boolean compiled = javac.getTask(errors, null, null,
                List.of("-d", out.toString(), "-classpath", classpath, "-proc:none", "-Xlint:none"), null, sources).call();
        assertTrue(compiled, "README.md's Java examples do not compile:\n" + where + errors);
    }

    /**
     * One example as a compilation unit. A block declaring a class (the JUnit example) becomes a
     * nested class, beside the application method it calls; any other becomes a method body.
     */
    private static JavaFileObject source(String name, String block) {
        boolean declaresAClass = Pattern.compile("(?m)^\\s*(@\\w+.*\\n\\s*)*class \\w+").matcher(block).find();
        String body = declaresAClass
                ? "static void checkout(String connectionString) { } // the application's own code\n" + block
                : "void example() throws Exception {\n" + block + "}\n";
        String text = "package readme;\n" + IMPORTS + "class " + name + " {\n" + body + "}\n";
        return new SimpleJavaFileObject(URI.create("string:///readme/" + name + ".java"), JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                return text;
            }
        };
    }
}
