package io.blackpipe.testing;

import io.blackpipe.upstream.LocalUpstream;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.mongodb.MongoDBContainer;

/**
 * A MongoDB container ({@link MongoImage}) as a single-node replica set, for machines with Docker but no mongod.
 *
 * <p>Its URI has no replicaSet= parameter on purpose: the set was initiated inside the container,
 * so its member address is the container's own hostname, which the host cannot reach. Without
 * replicaSet= the driver talks to the mapped port directly and still sees a replica set primary.
 */
final class MongoContainerUpstream implements LocalUpstream {
    private final MongoDBContainer container;
    private final String image;

    private MongoContainerUpstream(MongoDBContainer container, String image) {
        this.container = container;
        this.image = image;
    }

    /** Whether Testcontainers finds a working Docker engine; any trouble asking counts as no. */
    static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    static MongoContainerUpstream start() {
        String image = MongoImage.name();
        MongoDBContainer container = new MongoDBContainer(MongoImage.image()).withReplicaSet();
        try {
            container.start();
        } catch (RuntimeException e) {
            container.stop();
            throw new IllegalStateException("could not start the " + image + " container: " + e.getMessage(), e);
        }
        return new MongoContainerUpstream(container, image);
    }

    @Override
    public String uri() {
        // directConnection: the set names itself by the container hostname; the proxy dials the mapped port instead
        String url = container.getReplicaSetUrl();
        return url + (url.contains("?") ? "&" : "?") + "directConnection=true";
    }

    @Override
    public String description() {
        return image + " container, single-node replica set, at " + container.getHost() + ":" + container.getFirstMappedPort();
    }

    @Override
    public void close() {
        container.stop();
    }
}
