package io.blackpipe.testing;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.testcontainers.mongodb.MongoDBContainer;
import org.testcontainers.utility.DockerImageName;

/** The Docker lanes' image: the default, an override, and a malformed override refused by name. */
class MongoImageTest {

    @Test
    void unsetOrBlankIsMongo70() {
        assertEquals("mongo:7.0", MongoImage.from(null));
        assertEquals("mongo:7.0", MongoImage.from("  "));
    }

    @Test
    void anImageNameIsTakenAsGiven() {
        assertEquals("mongo:8.0", MongoImage.from(" mongo:8.0 "));
        assertEquals("registry.example.com:5000/team/mongo:8.0.4", MongoImage.from("registry.example.com:5000/team/mongo:8.0.4"));
    }

    /**
     * MongoDBContainer checks the name as it is built, Docker or not: a mirror's or a vendor's name, refused as given,
     * is taken as the lanes give it.
     */
    @ParameterizedTest
    @ValueSource(strings = {"docker.io/library/mongo:8.0", "mirror.gcr.io/library/mongo:7.0", "registry.example.com:5000/team/mongo:8.0.4",
            "percona/percona-server-mongodb:7.0"})
    void mongoDbContainerTakesTheImageWhateverItsRegistry(String name) {
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> new MongoDBContainer(DockerImageName.parse(name)));
        assertTrue(refused.getMessage().contains("compatible substitute"), refused.getMessage());
        assertDoesNotThrow(() -> new MongoDBContainer(MongoImage.compatible(name)));
    }

    @Test
    void aMalformedNameIsRefusedNamingTheVariable() {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> MongoImage.from("mongo 8.0"));
        assertTrue(refused.getMessage().startsWith("BLACKPIPE_TEST_MONGO_IMAGE=mongo 8.0 is not an image name"), refused.getMessage());
    }
}
