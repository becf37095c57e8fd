package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The README's contents line lists every section, in order, and each link lands on its heading. */
class ReadmeContentsTest {
    private static final Pattern LINK = Pattern.compile("\\[[^]]+]\\(#([^)]+)\\)");

    @Test
    void theContentsLinkEverySectionInOrder() throws Exception {
        List<String> lines = Files.readAllLines(Path.of("..", "README.md"));
        String contents = String.join(" ", lines.subList(0, lines.indexOf("## Quick start")));
        List<String> linked = LINK.matcher(contents).results().map(m -> m.group(1)).toList();
        List<String> sections = lines.stream().filter(line -> line.startsWith("## ")).map(line -> anchor(line.substring(3))).toList();
        assertEquals(sections, linked, "the contents line at the top of README.md");
    }

    /** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
    private static String anchor(String heading) {
        Matcher punctuation = Pattern.compile("[^\\p{L}\\p{N} _-]").matcher(heading.toLowerCase(Locale.ROOT));
        return punctuation.replaceAll("").replace(' ', '-');
    }
}
