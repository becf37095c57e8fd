package io.blackpipe.cli;

import io.blackpipe.observe.Printable;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** A plain text table: a header and rows, columns padded to their widest cell, two spaces apart. */
final class Table {
    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();

    Table(String... header) {
        this.header = List.of(header);
    }

    Table row(Object... cells) {
        rows.add(cells(cells));
        return this;
    }

    /**
     * The cells as printed: an empty or missing one is "-", so that every column has a word to split on, and the control
     * characters of one are escaped ({@code \n}, {@code \u001b}): a client's appName or command name holding a newline
     * printed a row of its own making under connections list and history, and an ESC could drive the terminal.
     */
    private static List<String> cells(Object... cells) {
        List<String> row = new ArrayList<>();
        for (Object cell : cells) {
            String text = cell == null ? "" : escaped(cell.toString());
            row.add(text.isEmpty() ? "-" : text);
        }
        return row;
    }

    static String escaped(String text) {
        return Printable.of(text);
    }

    /**
     * The header alone, its columns at least {@code widths} wide: for rows printed as they come ({@link #printRow}),
     * as a stream cannot wait for its widest cell.
     */
    void printHeader(PrintWriter out, int... widths) {
        line(out, header, atLeastHeader(widths));
    }

    /** One row now, padded as {@link #printHeader} padded the header; a wider cell pushes only its own row. */
    void printRow(PrintWriter out, int[] widths, Object... cells) {
        line(out, cells(cells), atLeastHeader(widths));
    }

    private int[] atLeastHeader(int[] widths) {
        int[] result = new int[header.size()];
        for (int i = 0; i < result.length; i++) {
            result[i] = Math.max(header.get(i).length(), i < widths.length ? widths[i] : 0);
        }
        return result;
    }

    boolean isEmpty() {
        return rows.isEmpty();
    }

    void print(PrintWriter out) {
        int[] widths = new int[header.size()];
        for (int i = 0; i < widths.length; i++) {
            widths[i] = header.get(i).length();
            for (List<String> row : rows) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        line(out, header, widths);
        for (List<String> row : rows) {
            line(out, row, widths);
        }
    }

    private static void line(PrintWriter out, List<String> cells, int[] widths) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            line.append(cells.get(i));
            if (i < cells.size() - 1) {
                line.append(" ".repeat(Math.max(widths[i] - cells.get(i).length(), 0) + 2));
            }
        }
        out.println(line);
    }
}
