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
        return findRepository(Path.of(""));
    }

    static Path findRepository(Path from) {
        Path dir = from.toAbsolutePath();
        for (Path p = dir; p != null; p = p.getParent()) {
            if (isCheckout(p)) {
                return p;
            }
        }
        // a user's own project is no checkout: the README's fromDockerfile() failed there with no way out
        throw new IllegalStateException("no blackpipe checkout (Dockerfile and proxy/pom.xml) in " + dir + " or its parents:"
                + " outside the checkout, name it, BlackPipeContainer.fromDockerfile(Path.of(\"/path/to/blackpipe\")), or run an"
                + " image already built, new BlackPipeContainer(\"blackpipe:latest\")");
    }

    private static boolean isCheckout(Path dir) {
        return Files.isRegularFile(dir.resolve("Dockerfile")) && Files.isRegularFile(dir.resolve("proxy/pom.xml"));
    }

    /**
     * {@code repository}/Dockerfile built as {@code name}, kept after the JVM exits.
     *
     * @throws IllegalArgumentException when {@code repository} is no blackpipe checkout: another project's
     *                                  Dockerfile would be built, and tagged as blackpipe's
     */
    static ImageFromDockerfile of(Path repository, String name) {
        if (repository == null || !isCheckout(repository)) {
            throw new IllegalArgumentException("fromDockerfile: " + repository + " is no blackpipe checkout (it needs Dockerfile"
                    + " and proxy/pom.xml)");
        }
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
