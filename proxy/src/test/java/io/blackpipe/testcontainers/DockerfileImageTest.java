package io.blackpipe.testcontainers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's BlackPipeContainer.fromDockerfile() looks for a blackpipe checkout around the working directory:
 * a user's own project has none, and the message must say what to do there. No Docker is needed to find out.
 */
class DockerfileImageTest {
    @Test
    void aUsersProjectIsNoCheckoutAndTheMessageNamesTheWaysOut(@TempDir Path usersProject) {
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> DockerfileImage.findRepository(usersProject));
        assertEquals("no blackpipe checkout (Dockerfile and proxy/pom.xml) in " + usersProject + " or its parents: outside the"
                + " checkout, name it, BlackPipeContainer.fromDockerfile(Path.of(\"/path/to/blackpipe\")), or run an image"
                + " already built, new BlackPipeContainer(\"blackpipe:latest\")", refused.getMessage());
    }

    @Test
    void aNamedDirectoryThatIsNoCheckoutIsRefusedRatherThanBuiltAsBlackpipe(@TempDir Path usersProject) throws Exception {
        Files.writeString(usersProject.resolve("Dockerfile"), "FROM scratch\n"); // the user's own image, not blackpipe's
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> BlackPipeContainer.fromDockerfile(usersProject));
        assertEquals("fromDockerfile: " + usersProject + " is no blackpipe checkout (it needs Dockerfile and proxy/pom.xml)",
                refused.getMessage());
    }

    @Test
    void theCheckoutIsFoundFromItsModules() {
        assertEquals(Path.of("..").toAbsolutePath().normalize(), DockerfileImage.findRepository(Path.of("src")));
    }
}
