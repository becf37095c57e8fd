package io.blackpipe.fault;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The scenarios shipped inside blackpipe's jar: the repository's fault-scripts/*.yaml (the build
 * copies them, see proxy/pom.xml), by name, a file's name without ".yaml" ("transient-blip"). A
 * test that depends on blackpipe runs them without a checkout of this repository. The report's own
 * scenarios (fault-scripts/report/) are not among them.
 */
public final class BundledScenarios {
    private static final String FOLDER = "fault-scripts/";
    private static final String SUFFIX = ".yaml";
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*");

    private BundledScenarios() {
    }

    /**
     * The bundled scenario {@code name}, checked whole by {@code loader} as a file would be.
     *
     * @throws IllegalArgumentException naming the bundled scenarios when none is called {@code name}, or
     *                                  with the {@link ScenarioException}'s message when it does not fit
     *                                  the deployment (a member it names is not there)
     */
    public static Scenario load(ScenarioLoader loader, String name) {
        String text = text(name);
        try {
            return loader.parse(resource(name), text);
        } catch (ScenarioException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /** The text of the bundled scenario {@code name}; IllegalArgumentException naming the bundled ones when there is none. */
    public static String text(String name) {
        InputStream in = NAME.matcher(name == null ? "" : name).matches()
                ? BundledScenarios.class.getClassLoader().getResourceAsStream(resource(name)) : null;
        if (in == null) {
            List<String> names = names();
            throw new IllegalArgumentException("no bundled scenario '" + name + "' (bundled: "
                    + (names.isEmpty() ? "none could be listed" : String.join(", ", names)) + ")");
        }
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the bundled scenario " + resource(name) + ": " + e.getMessage(), e);
        }
    }

    /**
     * The names of the bundled scenarios, sorted: those of fault-scripts/ in the jar (or the classes
     * folder) that holds this class; empty when that cannot be listed.
     */
    public static List<String> names() {
        try {
            return names(Path.of(BundledScenarios.class.getProtectionDomain().getCodeSource().getLocation().toURI()));
        } catch (URISyntaxException | RuntimeException e) {
            return List.of(); // no code source, or not a file
        }
    }

    /** The scenarios in fault-scripts/ of {@code home}, a classes folder or a jar; empty when it cannot be listed. */
    static List<String> names(Path home) {
        List<String> names = new ArrayList<>();
        try {
            if (Files.isDirectory(home)) {
                try (Stream<Path> files = Files.list(home.resolve(FOLDER))) {
                    files.map(f -> f.getFileName().toString()).forEach(file -> add(names, file));
                }
            } else {
                try (JarFile jar = new JarFile(home.toFile())) {
                    jar.stream().map(JarEntry::getName).filter(e -> e.startsWith(FOLDER))
                            .forEach(e -> add(names, e.substring(FOLDER.length())));
                }
            }
        } catch (IOException | RuntimeException e) {
            return List.of(); // neither a folder with fault-scripts/ nor a jar
        }
        Collections.sort(names);
        return names;
    }

    private static void add(List<String> names, String file) {
        if (file.endsWith(SUFFIX) && NAME.matcher(file).matches()) { // not report/..., nor another folder's
            names.add(file.substring(0, file.length() - SUFFIX.length()));
        }
    }

    private static String resource(String name) {
        return FOLDER + name + SUFFIX;
    }
}
