package io.blackpipe.testcontainers;

import io.blackpipe.RemoteBlackPipe;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Future;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.WaitStrategy;
import org.testcontainers.utility.DockerImageName;

/**
 * blackpipe as a Testcontainers container, for tests whose MongoDB already runs in a container:
 * <pre>{@code
 * Network network = Network.newNetwork();
 * MongoDBContainer mongo = new MongoDBContainer("mongo:7.0").withReplicaSet()
 *         .withNetwork(network).withNetworkAliases("mongo");
 * BlackPipeContainer blackpipe = BlackPipeContainer.fromDockerfile()
 *         .withNetwork(network).withUpstream("mongodb://mongo:27017/?directConnection=true");
 * mongo.start();
 * blackpipe.start();
 * MongoClient client = MongoClients.create(blackpipe.getConnectionString());
 * String id = blackpipe.control().fail("insert").times(1).error("NotWritablePrimary");
 * // ... the app inserts ...
 * assertEquals(1, blackpipe.control().retries("insert"));
 * }</pre>
 *
 * <h2>Which address the proxy advertises</h2>
 * blackpipe rewrites hello replies so that the driver learns every member by the proxy's address
 * (host and port) and never bypasses it. Testcontainers normally maps each container port to a
 * random host port, which the proxy inside the container cannot know, so it would advertise
 * addresses the test cannot dial (the container's 27017 instead of the host's 32768), and the
 * driver would lose every member after its first hello. blackpipe has no separate "advertised
 * port" setting: a member's advertised port is its listening port. So this container
 * <ul>
 * <li>picks, at start, {@link #withMemberPorts(int) N} consecutive ports that are free on this
 * host (N = the simulated member count, else 3), makes the proxy listen on those same numbers
 * inside the container ({@code BLACKPIPE_PORT}; members get port, port+1, ...) and binds each
 * host port to the equal container port, so an advertised port is a dialable host port;</li>
 * <li>advertises the Docker host as the test JVM reaches it ({@link #getHost()}, via
 * {@code BLACKPIPE_ADVERTISE_HOST}).</li>
 * </ul>
 * The connection string therefore works from the test JVM (and anything else on the Docker host),
 * not from other containers. For an application that itself runs in a container on the same
 * network, call {@link #withAdvertisedHost(String)} with this container's network alias: the same
 * ports then work inside the network. Only the admin port (9090) is mapped to a random port, since
 * nothing advertises it. The free-port check runs on this machine, so with a remote Docker host
 * the chosen ports may be taken there (start then fails with a port-binding error).
 */
public class BlackPipeContainer extends GenericContainer<BlackPipeContainer> {
    public static final int ADMIN_PORT = 9090;
    /** The image name {@link #fromDockerfile(Path)} builds and keeps. */
    public static final String BUILT_IMAGE = "blackpipe-testcontainers:latest";

    private String upstream;
    private int simulatedMembers;
    private int memberPorts = 3;
    private String advertisedHost;
    private int firstPort;
    private RemoteBlackPipe control;

    /** A blackpipe image that already exists (pulled or built): {@code new BlackPipeContainer("blackpipe:latest")}. */
    public BlackPipeContainer(String image) {
        this(DockerImageName.parse(image));
    }

    public BlackPipeContainer(DockerImageName image) {
        super(image);
        init();
    }

    /** An image still to be made ({@link #fromDockerfile(Path)}'s build). */
    BlackPipeContainer(Future<String> image) {
        super(image);
        init();
    }

    /** How the start waits for the proxy (for tests: no Docker needed to try it on a target of their own). */
    WaitStrategy waitStrategy() {
        return getWaitStrategy();
    }

    private void init() {
        addExposedPort(ADMIN_PORT);
        waitingFor(new ProxyHealthy(ADMIN_PORT).withStartupTimeout(Duration.ofMinutes(2)));
    }

    /**
     * Builds the repository's Dockerfile, found in the working directory or one of its parents.
     *
     * @throws IllegalStateException outside a checkout (a user's own project), naming {@link #fromDockerfile(Path)}
     *                               and an existing image as the ways out
     */
    public static BlackPipeContainer fromDockerfile() {
        return fromDockerfile(DockerfileImage.findRepository());
    }

    /**
     * Builds {@code repository}/Dockerfile, the image the README's {@code docker build .} makes
     * (tagged {@value #BUILT_IMAGE} and kept, so Docker's layer cache makes the next build cheap).
     * The build context is the checkout minus build output and VCS data.
     */
    public static BlackPipeContainer fromDockerfile(Path repository) {
        return new BlackPipeContainer(DockerfileImage.of(repository, BUILT_IMAGE));
    }

    /** The deployment to proxy, as the container sees it (e.g. a network alias: mongodb://mongo:27017/?directConnection=true). */
    public BlackPipeContainer withUpstream(String uri) {
        this.upstream = uri;
        return this;
    }

    /** Present a replica set of {@code members} (2-7) over the one upstream node. */
    public BlackPipeContainer withSimulatedMembers(int members) {
        this.simulatedMembers = members;
        return this;
    }

    /** How many member listeners to publish (default 3; a simulated set publishes its member count). */
    public BlackPipeContainer withMemberPorts(int count) {
        if (count < 1 || count > 16) {
            throw new IllegalArgumentException("withMemberPorts(" + count + "): from 1 to 16");
        }
        this.memberPorts = count;
        return this;
    }

    /** The host name written into hello replies; default: the Docker host as this JVM reaches it. */
    public BlackPipeContainer withAdvertisedHost(String host) {
        this.advertisedHost = host;
        return this;
    }

    @Override
    protected void configure() {
        if (upstream == null || upstream.isBlank()) {
            throw new IllegalStateException("BlackPipeContainer needs withUpstream(\"mongodb://...\")");
        }
        // Testcontainers builds (or pulls) the image after configure(): a first build takes minutes, and ports picked
        // free before it could be taken by then (another test JVM, another process). So the image comes first.
        getDockerImageName();
        int count = simulatedMembers > 0 ? simulatedMembers : memberPorts;
        if (firstPort == 0) { // chosen once: a restarted container keeps its ports (and its connection string)
            firstPort = HostPorts.consecutiveFree(count);
            for (int i = 0; i < count; i++) {
                addFixedExposedPort(firstPort + i, firstPort + i);
            }
        }
        withEnv("BLACKPIPE_UPSTREAM", upstream);
        withEnv("BLACKPIPE_PORT", Integer.toString(firstPort));
        withEnv("BLACKPIPE_ADVERTISE_HOST", advertisedHost != null ? advertisedHost : getHost());
        withEnv("BLACKPIPE_ADMIN_PORT", Integer.toString(ADMIN_PORT));
        if (simulatedMembers > 0) {
            withEnv("BLACKPIPE_SIMULATE_MEMBERS", Integer.toString(simulatedMembers));
        }
    }

    /** The port of the first member's listener, the same on the host and in the container. */
    public int getProxyPort() {
        return firstPort;
    }

    /** http://host:mapped-port of the admin API (/health, /metrics, /api/v1/...); {@link #control()} drives it from Java. */
    public String getAdminUrl() {
        return "http://" + getHost() + ":" + getMappedPort(ADMIN_PORT);
    }

    /** The connection string apps should use, as the running proxy reports it on /health. */
    public String getConnectionString() {
        return control().connectionString();
    }

    /**
     * The running proxy's controls, with the embedded {@code BlackPipe}'s methods: rules
     * ({@code control().fail("insert").times(1).with(Fault.RESET)}), scenarios (bundled ones by name),
     * counters, fired counts, history, failover, member faults, resetConnections, reset(). The same client
     * every call, so its counter baseline holds; it sends the BLACKPIPE_ADMIN_TOKEN given with withEnv, if any.
     */
    public synchronized RemoteBlackPipe control() {
        String adminUrl = getAdminUrl();
        if (control == null || !control.adminUrl().equals(adminUrl)) { // a restarted container maps its admin port anew
            control = RemoteBlackPipe.connect(adminUrl, getEnvMap().get("BLACKPIPE_ADMIN_TOKEN"));
        }
        return control;
    }
}
