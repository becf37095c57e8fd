package io.blackpipe.testing;

import org.testcontainers.utility.DockerImageName;

/**
 * The MongoDB image the Docker lanes run: mongo:7.0 unless BLACKPIPE_TEST_MONGO_IMAGE names
 * another (mongo:8.0 to run the client bulk write tests against the real command, or the image
 * of the server version an application runs).
 */
public final class MongoImage {
    static final String VARIABLE = "BLACKPIPE_TEST_MONGO_IMAGE";
    static final String DEFAULT = "mongo:7.0";

    private MongoImage() {
    }

    /** The image for this run; a malformed BLACKPIPE_TEST_MONGO_IMAGE fails here, named, before any container starts. */
    public static String name() {
        return from(System.getenv(VARIABLE));
    }

    /**
     * The image for MongoDBContainer, which takes only names it knows (mongo, mongodb/mongodb-community-server) unless told
     * otherwise: a mirror's (mirror.gcr.io/library/mongo:7.0, the usual way round Docker Hub's rate limits) was refused,
     * and with it every test of a run.
     */
    public static DockerImageName image() {
        return compatible(name());
    }

    static DockerImageName compatible(String name) {
        return DockerImageName.parse(name).asCompatibleSubstituteFor("mongo");
    }

    static String from(String configured) {
        if (configured == null || configured.isBlank()) {
            return DEFAULT;
        }
        String image = configured.strip();
        try {
            DockerImageName.parse(image).assertValid();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(VARIABLE + "=" + configured + " is not an image name (" + e.getMessage()
                    + "); use one such as mongo:8.0", e);
        }
        return image;
    }
}
