package io.blackpipe.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * README.md split the way the docs tests read it: prose paragraphs with their code spans, the lines of
 * fenced code blocks, and table rows, each with its line number and the section ("## ...") it is in,
 * so that a failure can name the line a reader would fix.
 */
public final class Readme {
    public static final Path PATH = Path.of("..", "README.md");
    private static final Pattern CODE_SPAN = Pattern.compile("`([^`]+)`");
    private static final Pattern LIST_ITEM = Pattern.compile("^\\s*(- |\\d+\\. ).*");

    /** A piece of inline code, at the line where it starts. */
    public record Span(int line, String text) {
    }

    /** Prose between blank lines (a list item, a table row or a heading on its own). */
    public record Paragraph(int line, String section, String text, List<Span> spans) {
    }

    /** One line inside a ``` fence; {@code language} is what follows the opening fence ("" for none). */
    public record CodeLine(int line, String section, String language, String text) {
    }

    private final List<String> lines;
    private final List<Paragraph> paragraphs = new ArrayList<>();
    private final List<CodeLine> codeLines = new ArrayList<>();

    private Readme(List<String> lines) {
        this.lines = lines;
        String section = "";
        String fence = null;
        List<Integer> pending = new ArrayList<>();
        for (int index = 0; index < lines.size(); index++) {
            String line = lines.get(index);
            if (line.startsWith("```")) {
                section = flush(pending, section);
                fence = fence == null ? line.substring(3).strip() : null;
            } else if (fence != null) {
                codeLines.add(new CodeLine(index + 1, section, fence, line));
            } else if (line.isBlank() || line.startsWith("#") || line.startsWith("|") || LIST_ITEM.matcher(line).matches()) {
                section = flush(pending, section);
                if (!line.isBlank()) {
                    pending.add(index);
                }
                if (line.startsWith("#") || line.startsWith("|")) {
                    section = flush(pending, section);
                }
            } else {
                pending.add(index);
            }
        }
        flush(pending, section);
    }

    public static Readme read() {
        try {
            return new Readme(Files.readAllLines(PATH));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The pending lines as one paragraph; returns the section they leave in force (a heading opens one). */
    private String flush(List<Integer> pending, String section) {
        if (pending.isEmpty()) {
            return section;
        }
        String first = lines.get(pending.get(0));
        String now = first.startsWith("## ") ? first.substring(3).strip() : section;
        StringBuilder text = new StringBuilder();
        List<Integer> starts = new ArrayList<>();
        for (int index : pending) {
            starts.add(text.length());
            text.append(lines.get(index).strip()).append(' ');
        }
        List<Span> spans = new ArrayList<>();
        Matcher span = CODE_SPAN.matcher(text);
        while (span.find()) {
            int at = 0;
            while (at + 1 < starts.size() && starts.get(at + 1) <= span.start()) {
                at++;
            }
            spans.add(new Span(pending.get(at) + 1, span.group(1).strip()));
        }
        paragraphs.add(new Paragraph(pending.get(0) + 1, now, text.toString().strip(), spans));
        pending.clear();
        return now;
    }

    public List<String> lines() {
        return lines;
    }

    public List<Paragraph> paragraphs() {
        return paragraphs;
    }

    public List<CodeLine> codeLines() {
        return codeLines;
    }

    /** The body rows of the tables in {@code section}: rows starting with '|', headers (a row above a rule row) and rules left out. */
    public List<Paragraph> tableRows(String section) {
        List<Paragraph> rows = new ArrayList<>();
        for (int index = 0; index < paragraphs.size(); index++) {
            Paragraph paragraph = paragraphs.get(index);
            boolean header = index + 1 < paragraphs.size() && paragraphs.get(index + 1).text().startsWith("| ---");
            if (paragraph.section().equals(section) && paragraph.text().startsWith("|") && !paragraph.text().startsWith("| ---") && !header) {
                rows.add(paragraph);
            }
        }
        return rows;
    }

    /** A table row's cells, split on '|' that is not escaped, each stripped. */
    public static List<String> cells(String row) {
        List<String> cells = new ArrayList<>();
        for (String cell : row.strip().replaceAll("^\\||\\|$", "").split("(?<!\\\\)\\|", -1)) {
            cells.add(cell.strip().replace("\\|", "|"));
        }
        return cells;
    }

    /** The code spans of {@code text}, in order. */
    public static List<String> spans(String text) {
        return CODE_SPAN.matcher(text).results().map(m -> m.group(1).strip()).toList();
    }
}
