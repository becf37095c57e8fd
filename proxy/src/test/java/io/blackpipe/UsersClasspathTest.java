package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.wire.BlockingCommandClient;
import java.io.File;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import javax.xml.parsers.DocumentBuilderFactory;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * A user adds blackpipe to their tests as one test-scoped dependency: what its POM passes on lands on
 * their test classpath beside their own driver. It passed on netty-all (about 50 jars, 18 MB, natives
 * of every platform), the CLI's picocli and the report's mongodb-driver-sync 5.x, which replaced a
 * user's own bson when declared first. Now it passes on what the API needs, and the API runs with that alone.
 */
class UsersClasspathTest {
    /** The POM's dependencies a user's build resolves: compile or runtime scope, not optional. */
    private static final Set<String> WHAT_THE_API_NEEDS = Set.of("io.netty:netty-handler", "io.netty:netty-codec-http",
            "org.mongodb:bson", "io.micrometer:micrometer-registry-prometheus", "org.yaml:snakeyaml");
    /** Where those and their own dependencies sit in a Maven repository. */
    private static final List<String> THEIR_JARS = List.of("/io/netty/", "/org/mongodb/bson/", "/io/micrometer/",
            "/io/prometheus/", "/org/hdrhistogram/", "/org/jspecify/", "/org/yaml/snakeyaml/");

    @Test
    void thePomPassesOnWhatTheApiNeedsAndNothingElse() throws Exception {
        org.w3c.dom.Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Path.of("pom.xml").toFile());
        Set<String> passedOn = new TreeSet<>();
        for (Element dependency : children(child(pom.getDocumentElement(), "dependencies"), "dependency")) {
            String scope = text(dependency, "scope", "compile");
            if ((scope.equals("compile") || scope.equals("runtime")) && !text(dependency, "optional", "false").equals("true")) {
                passedOn.add(text(dependency, "groupId", "") + ":" + text(dependency, "artifactId", ""));
            }
        }
        assertEquals(new TreeSet<>(WHAT_THE_API_NEEDS), passedOn,
                "what proxy/pom.xml passes on to a user's tests (the CLI's and the report's own go optional: shaded, not passed on)");
    }

    @Test
    void theApiRunsWithOnlyThoseOnTheClasspath() throws Exception {
        assertEquals("rules 2, scenario rules 1, members 1+, reset: the matching insert only",
                runUsage(jar -> jar, "5.14"));
    }

    /**
     * Drivers 3.12 and 4.0 bring bson 3.12 and 4.0, which Maven gives a user's tests when their driver is declared first:
     * whereCommand called Bson.toBsonDocument(), which came in bson 4.2, and failed with NoSuchMethodError.
     */
    @Test
    void theApiRunsOnTheOldestBsonItSupports() throws Exception {
        Path oldest = Path.of("target", "oldest-bson", "bson-3.12.14.jar").toAbsolutePath();
        assertTrue(Files.isRegularFile(oldest), oldest + " (copied by the POM's maven-dependency-plugin)");
        assertEquals("rules 2, scenario rules 1, members 1+, reset: the matching insert only",
                runUsage(jar -> jar.getPath().contains("/org/mongodb/bson/") ? oldest.toFile() : jar, "3.12.14"));
    }

    /** Runs {@link Usage} on what the API needs alone, each jar of it as {@code replaced} gives it; checks bson's version. */
    private static String runUsage(UnaryOperator<File> replaced, String bsonVersion) throws Exception {
        List<URL> classpath = new ArrayList<>();
        for (String entry : System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")).split(File.pathSeparator)) {
            File file = new File(entry);
            String path = file.toURI().getPath();
            if (file.isDirectory() || THEIR_JARS.stream().anyMatch(path::contains)) {
                classpath.add(replaced.apply(file).toURI().toURL()); // the directories: blackpipe's classes, and Usage below
            }
        }
        try (URLClassLoader users = new URLClassLoader(classpath.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            assertThrows(ClassNotFoundException.class, () -> users.loadClass("picocli.CommandLine"));
            assertThrows(ClassNotFoundException.class, () -> users.loadClass("com.mongodb.client.MongoClient"));
            String bson = users.loadClass("org.bson.BsonDocument").getProtectionDomain().getCodeSource().getLocation().getPath();
            assertTrue(bson.contains(bsonVersion), bson);
            @SuppressWarnings("unchecked")
            Function<String, String> usage = (Function<String, String>) users.loadClass(Usage.class.getName())
                    .getDeclaredConstructor().newInstance();
            return usage.apply(UpstreamLane.uri());
        }
    }

    /**
     * A user's test, loaded apart: BlackPipe, its rules (one matching a command's fields) and scenarios, its admin API
     * through RemoteBlackPipe. The inserts go on blackpipe's own client: no driver is on this classpath.
     */
    public static final class Usage implements Function<String, String> {
        @Override
        public String apply(String upstream) {
            try (BlackPipe blackPipe = BlackPipe.builder().upstream(upstream).adminPort(0).start()) {
                String sku = "B2-" + System.nanoTime();
                blackPipe.fail("insert").whereCommand(new BsonDocument("documents.sku", new BsonString(sku))).times(1).with(Fault.RESET);
                RemoteBlackPipe remote = RemoteBlackPipe.connect(blackPipe.adminUrl());
                remote.fail("find").times(1).error("NotWritablePrimary");
                int rules = blackPipe.rules().size();
                String reset = reset(blackPipe, "A1-" + System.nanoTime()) ? "the other insert too" : reset(blackPipe, sku)
                        ? "the matching insert only" : "neither";
                blackPipe.clearRules();
                blackPipe.runBundledScenario("transient-blip");
                return "rules " + rules + ", scenario rules " + remote.rules().size() + ", members "
                        + (remote.members().isEmpty() ? "0" : "1+") + ", reset: " + reset;
            }
        }

        /** Whether an insert of {@code sku} through the proxy's first listener met a reset. */
        private static boolean reset(BlackPipe blackPipe, String sku) {
            MemberAddress first = MemberAddress.parse(blackPipe.connectionString().substring("mongodb://".length()).split("[,/]")[0]);
            try (BlockingCommandClient client = new BlockingCommandClient(first.host(), first.port(), 5_000)) {
                client.run("users_classpath", new BsonDocument("insert", new BsonString("orders"))
                        .append("documents", new BsonArray(List.of(new BsonDocument("sku", new BsonString(sku))))));
                return false;
            } catch (IOException e) {
                return true;
            }
        }
    }

    private static String text(Element element, String tag, String absent) {
        Element found = child(element, tag);
        return found == null ? absent : found.getTextContent().strip();
    }

    /** The first child element named {@code tag} (not a grandchild: an exclusion's groupId is not the dependency's). */
    private static Element child(Element parent, String tag) {
        List<Element> found = children(parent, tag);
        return found.isEmpty() ? null : found.get(0);
    }

    private static List<Element> children(Element parent, String tag) {
        List<Element> found = new ArrayList<>();
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            if (nodes.item(i) instanceof Element element && element.getTagName().equals(tag)) {
                found.add(element);
            }
        }
        return found;
    }
}
