package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The names of the bundled scenarios, read from a jar as a user's classpath holds blackpipe (the build's tests see a folder). */
class BundledScenariosTest {

    @Test
    void theScenariosOfAJarAreListedWithoutTheReportsOwnNorOtherFiles(@TempDir Path temp) throws IOException {
        Path jar = temp.resolve("blackpipe.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
            for (String entry : new String[] {"fault-scripts/", "fault-scripts/transient-blip.yaml", "fault-scripts/report/",
                    "fault-scripts/report/command-error.yaml", "fault-scripts/slow-primary.yaml", "fault-scripts/README.md",
                    "other/not-a-scenario.yaml"}) {
                out.putNextEntry(new JarEntry(entry));
                out.write("name: x\n".getBytes(StandardCharsets.UTF_8));
                out.closeEntry();
            }
        }
        assertEquals(List.of("slow-primary", "transient-blip"), BundledScenarios.names(jar));
        assertEquals(List.of(), BundledScenarios.names(temp.resolve("missing.jar")));
    }

    @Test
    void theBuildsClassesFolderHoldsEveryShippedScenario() throws IOException {
        List<String> shipped;
        try (var files = Files.list(Path.of("../fault-scripts"))) {
            shipped = files.map(f -> f.getFileName().toString()).filter(f -> f.endsWith(".yaml"))
                    .map(f -> f.substring(0, f.length() - 5)).sorted().toList();
        }
        assertEquals(shipped, BundledScenarios.names());
    }
}
