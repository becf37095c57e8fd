package io.blackpipe.testcontainers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Set;
import org.testcontainers.images.builder.ImageFromDockerfile;

/** The repository's Dockerfile as a Testcontainers image, with the checkout as its build context. */
final class DockerfileImage {
    /** Never sent to Docker, at any depth: build output, VCS data, IDE and npm folders. */
    private static final Set<String> EXCLUDED = Set.of(".git", "target", "node_modules", ".idea", ".vscode");

    private DockerfileImage() {
    }

    /** The blackpipe checkout (Dockerfile and proxy/pom.xml) at the working directory or above it. */
    static Path findRepository() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path p = dir; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("Dockerfile")) && Files.isRegularFile(p.resolve("proxy/pom.xml"))) {
                return p;
            }
        }
        throw new IllegalStateException("no blackpipe checkout (Dockerfile and proxy/pom.xml) in " + dir + " or its parents");
    }

    /** {@code repository}/Dockerfile built as {@code name}, kept after the JVM exits. */
    static ImageFromDockerfile of(Path repository, String name) {
        ImageFromDockerfile image = new ImageFromDockerfile(name, false);
        try {
            Files.walkFileTree(repository, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) {
                    return !dir.equals(repository) && EXCLUDED.contains(dir.getFileName().toString())
                            ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                    if (attributes.isRegularFile()) {
                        image.withFileFromPath(repository.relativize(file).toString().replace('\\', '/'), file);
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the build context " + repository + ": " + e.getMessage(), e);
        }
        return image;
    }
}
