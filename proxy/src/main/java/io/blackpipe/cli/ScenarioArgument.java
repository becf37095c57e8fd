package io.blackpipe.cli;

import io.blackpipe.fault.BundledScenarios;
import io.blackpipe.fault.Scenario;
import io.blackpipe.fault.ScenarioException;
import io.blackpipe.fault.ScenarioLoader;
import io.blackpipe.fault.ScenarioText;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Where the CLI takes a scenario file (--scenario, BLACKPIPE_SCENARIO, scenario run/validate): a
 * file, or, when no file of that name exists, the name of a scenario shipped in the jar
 * ("transient-blip", see {@link BundledScenarios}), so a Docker sidecar needs no mounted file for
 * one. An existing file always wins.
 */
final class ScenarioArgument {
    private final Path file;
    private final String bundledText; // null: the argument is a file (existing or not)

    ScenarioArgument(Path file) {
        this.file = file;
        this.bundledText = Files.exists(file) ? null : bundled(file.toString());
    }

    private static String bundled(String name) {
        try {
            return BundledScenarios.text(name);
        } catch (IllegalArgumentException e) {
            return null; // no bundled scenario of that name
        }
    }

    /** What errors name: the file, or "fault-scripts/NAME.yaml (bundled)". */
    String source() {
        return bundledText == null ? file.toString() : "fault-scripts/" + file + ".yaml (bundled)";
    }

    /**
     * The scenario's text.
     *
     * @throws IOException       when it is no bundled scenario and the file cannot be read
     * @throws ScenarioException when the file is too large or not UTF-8
     */
    String text() throws IOException {
        return bundledText != null ? bundledText : ScenarioText.read(file, source());
    }

    /** Reads and checks the scenario whole with {@code loader}; errors are "source:line: field: message". */
    Scenario load(ScenarioLoader loader) throws IOException, ScenarioException {
        return loader.parse(source(), text());
    }

    /** Why {@link #text()} failed: for a missing file, also that no bundled scenario has that name, and which do. */
    String cannotRead(IOException e) {
        if (!(e instanceof NoSuchFileException)) {
            return file + ": " + e.getMessage();
        }
        List<String> names = BundledScenarios.names();
        return file + ": no such file, nor a bundled scenario (bundled: "
                + (names.isEmpty() ? "none could be listed" : String.join(", ", names)) + ")";
    }

    /**
     * The FILE|NAME parameter of scenario run and validate: an empty one ({@code scenario validate "$FILE"} with FILE
     * unset) is a usage error, exit 2; read as a path, it was the working directory, "cannot read : Is a directory".
     */
    static final class Typed implements ITypeConverter<Path> {
        @Override
        public Path convert(String value) {
            if (value.isBlank()) {
                throw new TypeConversionException("an empty scenario; give a file, or a bundled scenario's name");
            }
            return Path.of(value);
        }
    }
}
