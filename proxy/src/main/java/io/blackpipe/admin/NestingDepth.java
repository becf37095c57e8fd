package io.blackpipe.admin;

/**
 * How deep a request body's documents and arrays nest, read from its text before any parser sees it: the JSON and YAML
 * readers, a rule's matcher and the listing that writes it back all recurse, and a rule nested a thousand levels deep
 * overflowed one of them (the request went unanswered, or every later listing did). A body a quoted string holds is no
 * nesting. Mongod refuses documents deeper than 100 levels to its collections; no rule or scenario needs more.
 */
final class NestingDepth {
    static final int MAX = 100;

    private NestingDepth() {
    }

    /** Why {@code body} nests too deep ("nested deeper than 100 levels, at character 812"), or null. */
    static String whyTooDeep(String body) {
        int depth = 0;
        char quote = 0;
        for (int i = 0; i < body.length(); i++) {
            char c = body.charAt(i);
            if (quote != 0) {
                if (c == '\\') {
                    i++; // the escaped character, a quote too, ends nothing
                } else if (c == quote) {
                    quote = 0;
                }
            } else if (c == '"' || c == '\'') {
                quote = c;
            } else if (c == '{' || c == '[') {
                if (++depth > MAX) {
                    return "nested deeper than " + MAX + " levels (documents and arrays), at character " + (i + 1);
                }
            } else if (c == '}' || c == ']') {
                depth = Math.max(0, depth - 1);
            }
        }
        return null;
    }
}
