package io.blackpipe.cli;

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
        List<String> row = new ArrayList<>();
        for (Object cell : cells) {
            String text = cell == null ? "" : cell.toString();
            row.add(text.isEmpty() ? "-" : text);
        }
        rows.add(row);
        return this;
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
                line.append(" ".repeat(widths[i] - cells.get(i).length() + 2));
            }
        }
        out.println(line);
    }
}
