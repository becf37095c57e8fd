package io.blackpipe.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

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

    @Test
    void aMalformedNameIsRefusedNamingTheVariable() {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> MongoImage.from("mongo 8.0"));
        assertTrue(refused.getMessage().startsWith("BLACKPIPE_TEST_MONGO_IMAGE=mongo 8.0 is not an image name"), refused.getMessage());
    }
}
