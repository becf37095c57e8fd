package io.blackpipe.testcontainers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.blackpipe.BlackPipe;
import io.blackpipe.Fault;
import io.blackpipe.RemoteBlackPipe;
import io.blackpipe.admin.AdminServer;
import io.blackpipe.testing.BindRetry;
import io.blackpipe.testing.HeldPort;
import io.blackpipe.testing.MongoImage;
import io.blackpipe.testing.UpstreamLane;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonArray;
import org.bson.Document;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.ContainerLaunchException;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.WaitStrategy;
import org.testcontainers.containers.wait.strategy.WaitStrategyTarget;
import org.testcontainers.mongodb.MongoDBContainer;

/**
 * The image the repository's Dockerfile builds, run the way a user with containerised MongoDB
 * runs it: a mongo:7.0 (or BLACKPIPE_TEST_MONGO_IMAGE) replica set and blackpipe on one Docker network, the Java driver on the
 * host dialling only blackpipe, a fault added through {@code control()}. That test needs a Docker
 * engine; where there is none it is skipped and says why. The build context, the port choice and
 * control() against a blackpipe in this JVM are checked everywhere.
 */
class BlackPipeContainerTest {
    /** In the test rather than @BeforeAll, so the report counts a skipped test and keeps the reason. */
    private static void assumeDocker() {
        String firstAttempt = firstAttemptProblem(); // before isDockerAvailable(), which keeps only "previous attempts failed"
        boolean available = dockerAvailable();
        String reason = available ? "" : "Docker is not available here: " + describe(firstAttempt);
        if (!available) {
            System.out.println("[blackpipe] BlackPipeContainerTest's Docker test skipped. " + reason);
        }
        Assumptions.assumeTrue(available, reason);
    }

    @Test
    void theDriverOnTheHostGoesThroughTheContainerAndSurvivesAnInjectedReset() throws Exception {
        assumeDocker();
        AtomicInteger inserts = new AtomicInteger();
        try (Network network = Network.newNetwork();
             MongoDBContainer mongo = new MongoDBContainer(MongoImage.image()).withReplicaSet()
                     .withNetwork(network).withNetworkAliases("mongo");
             BlackPipeContainer blackpipe = BlackPipeContainer.fromDockerfile()
                     .withNetwork(network)
                     // the set knows itself by the container's hostname: directConnection makes the proxy dial the alias
                     .withUpstream("mongodb://mongo:27017/?directConnection=true")
                     .dependsOn(mongo)) {
            blackpipe.start();

            String connectionString = blackpipe.getConnectionString();
            assertTrue(connectionString.startsWith("mongodb://" + blackpipe.getHost() + ":" + blackpipe.getProxyPort()),
                    "advertises the Docker host and a port bound to the same number: " + connectionString);

            String reset = blackpipe.control().fail("insert").times(1).with(Fault.RESET);

            try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(connectionString))
                    .applyToClusterSettings(b -> b.serverSelectionTimeout(20, TimeUnit.SECONDS))
                    .addCommandListener(new CommandListener() {
                        @Override
                        public void commandStarted(CommandStartedEvent event) {
                            if (event.getCommandName().equals("insert")) {
                                inserts.incrementAndGet();
                            }
                        }
                    })
                    .build())) {
                MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
                orders.insertOne(new Document("order", 1));
                assertEquals(2, inserts.get(), "the reset insert was retried once");
                assertEquals(1, orders.countDocuments());
                assertEquals(2, blackpipe.control().attempts("insert"), "the container's counters agree with the driver");
                assertEquals(1, blackpipe.control().retries("insert"));
                assertEquals(1, blackpipe.control().fired(reset));
            }

            String direct = mongo.getReplicaSetUrl("shop");
            try (MongoClient server = MongoClients.create(direct + (direct.contains("?") ? "&" : "?") + "directConnection=true")) {
                assertEquals(1, server.getDatabase("shop").getCollection("orders").countDocuments(), "one order on the server");
            }

            String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(blackpipe.getAdminUrl() + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(metrics.contains("blackpipe_faults_injected_total{command=\"insert\",fault=\"resetConnection\""), metrics);
        }
    }

    /**
     * control() and getConnectionString() where there is no Docker: the one thing only a started container
     * has, its admin URL (a mapped port), leads to a real blackpipe's admin server in this JVM, behind the
     * token the container was given with withEnv; from there on it is what a started container does.
     */
    @Test
    void controlDrivesTheProxyBehindTheAdminUrlWithTheTokenGivenToTheContainer() throws Exception {
        try (BlackPipe proxy = BlackPipe.start(UpstreamLane.uri());
             AdminServer first = AdminServer.start(proxy.server(), "127.0.0.1", 0, "s3cret");
             AdminServer afterRestart = AdminServer.start(proxy.server(), "127.0.0.1", 0, "s3cret")) {
            AtomicReference<AdminServer> mapped = new AtomicReference<>(first);
            BlackPipeContainer container = new BlackPipeContainer("blackpipe:never-pulled") {
                @Override
                public String getAdminUrl() {
                    return "http://127.0.0.1:" + mapped.get().port();
                }
            }.withEnv("BLACKPIPE_ADMIN_TOKEN", "s3cret");

            assertEquals(proxy.connectionString(), container.getConnectionString());
            RemoteBlackPipe control = container.control();
            assertSame(control, container.control(), "one client, so its counter baseline holds between calls");
            String id = control.fail("insert").times(1).with(Fault.RESET);
            assertEquals(List.of(id), control.rules().stream().map(r -> org.bson.BsonDocument.parse(r).getString("id").getValue()).toList(),
                    "the token went with it: the proxy took the rule");
            List<String> inserts = new java.util.concurrent.CopyOnWriteArrayList<>();
            try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(container.getConnectionString() + "&retryWrites=true"))
                    .addCommandListener(new CommandListener() {
                        @Override
                        public void commandStarted(CommandStartedEvent event) {
                            inserts.add(event.getCommandName());
                        }
                    }).build())) {
                client.getDatabase(UpstreamLane.freshDatabaseName("container")).getCollection("c").insertOne(new Document("_id", 1));
            }
            assertEquals(2, inserts.stream().filter("insert"::equals).count(), "reset once, retried once");
            assertEquals(1, control.retries("insert"));
            assertEquals(1, control.fired(id));

            mapped.set(afterRestart); // a restarted container's admin port is mapped anew
            assertEquals("http://127.0.0.1:" + afterRestart.port(), container.control().adminUrl());
            assertEquals(1, container.control().fired(id));
        }
    }

    /**
     * The image is made before the member ports are picked. Testcontainers calls configure() first and builds the
     * image after it, which takes minutes the first time: ports picked free before that could be taken by then (by
     * another test JVM, or any process), and a retried start picks the same ones again. The image here stops the
     * start as it is asked for, after noting whether any port was picked by then; no Docker is needed.
     */
    @Test
    void theImageIsReadyBeforeTheMemberPortsArePicked() {
        AtomicInteger portPickedWhenTheImageWasAskedFor = new AtomicInteger(-1);
        AtomicReference<BlackPipeContainer> container = new AtomicReference<>();
        CompletableFuture<String> image = new CompletableFuture<>() {
            @Override
            public String get() throws ExecutionException {
                portPickedWhenTheImageWasAskedFor.set(container.get().getProxyPort());
                throw new ExecutionException(new IllegalStateException("the test stops the start here"));
            }
        };
        container.set(new BlackPipeContainer(image).withUpstream("mongodb://mongo:27017/?directConnection=true")
                .withAdvertisedHost("blackpipe"));
        assertThrows(RuntimeException.class, container.get()::configure, "the image was asked for");
        assertEquals(0, portPickedWhenTheImageWasAskedFor.get(), "no port was picked before the image was made");
    }

    /**
     * A container whose proxy exits at start (here, as a bad BLACKPIPE_UPSTREAM makes it) fails the start at once,
     * quoting the end of its log. Before, Testcontainers' HTTP wait asked the gone container for its whole timeout
     * (2 min), then said only that the URL never answered. The target stands in for the container: no Docker needed.
     */
    @Test
    void aContainerThatStopsAtStartFailsTheStartAtOnceWithItsLog() throws Exception {
        try (HeldPort refusing = HeldPort.any()) { // bound, not listening: refused, and given to no process that would answer
            String log = "blackpipe: the upstream URI must start with mongodb:// or mongodb+srv://, got 'mongo:27017' (set by BLACKPIPE_UPSTREAM)\n"
                    + "Usage: blackpipe proxy [-hV] ...\n";
            WaitStrategy wait = new BlackPipeContainer("blackpipe:test").waitStrategy().withStartupTimeout(Duration.ofSeconds(30));
            long start = System.nanoTime();
            ContainerLaunchException e = assertThrows(ContainerLaunchException.class,
                    () -> wait.waitUntilReady(new Target(refusing.port(), false, log)));
            assertTrue(e.getMessage().startsWith("the blackpipe container stopped before its proxy was healthy; its log ends:\n"
                    + "blackpipe: the upstream URI must start with mongodb://"), e.getMessage());
            assertTrue(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start) < 25, "it did not wait for the timeout");
        }
    }

    @Test
    void theStartWaitsForTheProxyToBeHealthyAndNamesWhatItAskedWhenItNeverIs() throws Exception {
        try (BlackPipe proxy = BlackPipe.start(UpstreamLane.uri());
             AdminServer admin = AdminServer.start(proxy.server(), "127.0.0.1", 0, "s3cret")) {
            new BlackPipeContainer("blackpipe:test").waitStrategy().waitUntilReady(new Target(admin.port(), true, "")); // returns
        }
        try (ServerSocket listening = new ServerSocket(0)) { // accepts, never answers
            WaitStrategy wait = new BlackPipeContainer("blackpipe:test").waitStrategy().withStartupTimeout(Duration.ofSeconds(2));
            ContainerLaunchException e = assertThrows(ContainerLaunchException.class,
                    () -> wait.waitUntilReady(new Target(listening.getLocalPort(), true, "blackpipe: listening\n")));
            assertEquals("the proxy in the blackpipe container was not healthy within 2 s (GET http://127.0.0.1:" + listening.getLocalPort()
                    + "/health); its log ends:\nblackpipe: listening", e.getMessage());
        }
    }

    /** The container as a wait strategy sees it: its admin port mapped to {@code adminPort} here, running or not, its log. */
    private record Target(int adminPort, boolean running, String logs) implements WaitStrategyTarget {
        @Override
        public String getHost() {
            return "127.0.0.1";
        }

        @Override
        public Integer getMappedPort(int originalPort) {
            assertEquals(BlackPipeContainer.ADMIN_PORT, originalPort);
            return adminPort;
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        @Override
        public String getLogs() {
            return logs;
        }

        @Override
        public List<Integer> getExposedPorts() {
            return List.of(BlackPipeContainer.ADMIN_PORT);
        }

        @Override
        public InspectContainerResponse getContainerInfo() {
            return new InspectContainerResponse(); // nameless: Testcontainers' own HTTP wait reads the name for its log line
        }
    }

    @Test
    void theImageIsBuiltFromTheCheckoutWithoutBuildOutput() {
        Path repository = DockerfileImage.findRepository();
        Set<String> context = DockerfileImage.of(repository, "blackpipe-context-check").getTransferables().keySet();
        assertTrue(context.containsAll(Set.of("Dockerfile", "pom.xml", "proxy/pom.xml",
                "proxy/src/main/java/io/blackpipe/testcontainers/BlackPipeContainer.java")), context.toString());
        assertTrue(context.stream().noneMatch(f -> f.startsWith("proxy/target/") || f.startsWith(".git/") || f.contains("/target/")),
                "no build output or VCS data is sent to Docker: " + context);
    }

    @Test
    void theEntrypointStartsTheJvmAsTheLauncherDoesAndPassesEveryArgumentOn() throws Exception {
        Path dockerfile = DockerfileImage.findRepository().resolve("Dockerfile");
        String line = java.nio.file.Files.readAllLines(dockerfile).stream().filter(l -> l.startsWith("ENTRYPOINT "))
                .findFirst().orElseThrow();
        List<String> entrypoint = new ArrayList<>();
        BsonArray.parse(line.substring("ENTRYPOINT ".length())).forEach(v -> entrypoint.add(v.asString().getValue()));
        // The shell form runs here as in the image, printing each word it would start java with.
        entrypoint.set(2, entrypoint.get(2).replace("exec java ", "exec printf [%s] java "));

        assertEquals("[java][-XX:+UseParallelGC][-jar][/opt/blackpipe/blackpipe.jar][proxy][--note][a b]",
                run(entrypoint, List.of("proxy", "--note", "a b"), null));
        assertEquals("[java][-XX:+UseG1GC][-Xmx256m][-jar][/opt/blackpipe/blackpipe.jar][proxy]",
                run(entrypoint, List.of("proxy"), "-XX:+UseG1GC -Xmx256m"));
        assertEquals("[java][-jar][/opt/blackpipe/blackpipe.jar][health]", run(entrypoint, List.of("health"), ""));
    }

    /**
     * The image's health check, run here by sh as in the image with this build's CLI in place of the image's jar: the
     * address it reports failing to reach (nothing listens at port 1) is the one it asked. It asks where the variables
     * put the admin server as every control command does; its own shell mapping once missed "::0".
     */
    @Test
    void theHealthcheckAsksTheAdminServerWhereTheEnvironmentPutsIt() throws Exception {
        List<String> lines = java.nio.file.Files.readAllLines(DockerfileImage.findRepository().resolve("Dockerfile"));
        String cmd = lines.get(lines.indexOf(lines.stream().filter(l -> l.startsWith("HEALTHCHECK ")).findFirst().orElseThrow()) + 1).strip();
        List<String> healthcheck = new ArrayList<>();
        BsonArray.parse(cmd.substring("CMD ".length())).forEach(v -> healthcheck.add(v.asString().getValue()));
        String imageJar = "-jar /opt/blackpipe/blackpipe.jar ";
        String script = healthcheck.get(2);
        assertTrue(script.startsWith("java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC " + imageJar + "health"), script);
        String thisBuild = "-cp '" + System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))
                + "' io.blackpipe.cli.Main ";
        healthcheck.set(2, "'" + Path.of(System.getProperty("java.home"), "bin", "java") + "' "
                + script.substring("java ".length()).replace(imageJar, thisBuild));

        assertTrue(unhealthy(healthcheck, Map.of("BLACKPIPE_ADMIN_HOST", "0.0.0.0", "BLACKPIPE_ADMIN_PORT", "1"))
                .contains("http://127.0.0.1:1 did not answer"), "the image's wildcard");
        assertTrue(unhealthy(healthcheck, Map.of("BLACKPIPE_ADMIN_HOST", "127.0.0.2", "BLACKPIPE_ADMIN_PORT", "1"))
                .contains("http://127.0.0.2:1 did not answer"));
        for (String ipv6Wildcard : new String[] {"::", "[::]", "::0", "0:0:0:0:0:0:0:0"}) {
            assertTrue(unhealthy(healthcheck, Map.of("BLACKPIPE_ADMIN_HOST", ipv6Wildcard, "BLACKPIPE_ADMIN_PORT", "1"))
                    .contains("http://[::1]:1 did not answer"), ipv6Wildcard);
        }
        assertTrue(unhealthy(healthcheck, Map.of("BLACKPIPE_ADMIN_HOST", "0:0::1", "BLACKPIPE_ADMIN_PORT", "1"))
                .contains("http://[::1]:1 did not answer"), "an IPv6 address, bracketed once");

        // Docker reserves a health check's exit 2, which health gives a usage error (no fixed port): exit 1, unhealthy
        String noFixedPort = unhealthy(healthcheck, Map.of("BLACKPIPE_ADMIN_HOST", "0.0.0.0", "BLACKPIPE_ADMIN_PORT", "0"));
        assertTrue(noFixedPort.contains("BLACKPIPE_ADMIN_PORT is 0, a port the proxy picked as it started"), noFixedPort);
    }

    /** The healthcheck's output with these BLACKPIPE_ADMIN_* variables (the others unset); it must exit 1. */
    private static String unhealthy(List<String> command, Map<String, String> environment) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().keySet().removeIf(name -> name.startsWith("BLACKPIPE_"));
        builder.environment().putAll(environment);
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
        assertEquals(1, process.waitFor(), out);
        return out;
    }

    @Test
    void theLauncherStartsTheJvmWithTheSameOptionsAsTheImage() throws Exception {
        // ./blackpipe's last line, run by sh as the image's entrypoint is, with printf in place of java
        String exec = java.nio.file.Files.readAllLines(DockerfileImage.findRepository().resolve("blackpipe")).stream()
                .filter(l -> l.startsWith("exec java ")).findFirst().orElseThrow();
        List<String> launcher = List.of("sh", "-c", "run_jar=/x/blackpipe.jar; " + exec.replace("exec java ", "exec printf [%s] java "),
                "blackpipe");

        assertEquals("[java][-XX:+UseParallelGC][-jar][/x/blackpipe.jar][report][--spec]",
                run(launcher, List.of("report", "--spec"), null));
        assertEquals("[java][-jar][/x/blackpipe.jar][report]", run(launcher, List.of("report"), ""));
    }

    /** The entrypoint's output with {@code args} as the container's command and BLACKPIPE_JAVA_OPTS (null: unset). */
    private static String run(List<String> entrypoint, List<String> args, String javaOpts) throws Exception {
        List<String> command = new ArrayList<>(entrypoint);
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().remove("BLACKPIPE_JAVA_OPTS");
        if (javaOpts != null) {
            builder.environment().put("BLACKPIPE_JAVA_OPTS", javaOpts);
        }
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
        assertEquals(0, process.waitFor(), out);
        return out;
    }

    /** As MongodReplicaSetTest's free ports: one taken before the test binds it runs the case again. */
    @Test
    void memberPortsAreConsecutiveAndFreeOnThisHost() throws Exception {
        BindRetry.upTo(3, () -> {
            int first = HostPorts.consecutiveFree(3);
            for (int port = first; port < first + 3; port++) {
                try (ServerSocket socket = new ServerSocket(port)) {
                    assertEquals(port, socket.getLocalPort());
                }
            }
        });
    }

    private static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    /** What Testcontainers says when asked for a Docker client; null when it gets one. */
    private static String firstAttemptProblem() {
        try {
            DockerClientFactory.instance().client();
            return null;
        } catch (RuntimeException | LinkageError e) {
            return e.getMessage();
        }
    }

    /** Testcontainers' words and where a Docker engine was looked for. */
    private static String describe(String problem) {
        String dockerHost = System.getenv("DOCKER_HOST");
        boolean socket = java.nio.file.Files.exists(java.nio.file.Path.of("/var/run/docker.sock"));
        return (problem == null ? "Testcontainers reports no Docker engine" : problem)
                + " (DOCKER_HOST " + (dockerHost == null ? "unset" : "=" + dockerHost) + ", /var/run/docker.sock "
                + (socket ? "present but not answering" : "absent") + ")";
    }
}
