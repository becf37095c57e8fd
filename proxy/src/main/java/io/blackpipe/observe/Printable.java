package io.blackpipe.observe;

/**
 * Text a client or an API caller chose, made safe to print on one line: control and format characters escaped by code
 * point ({@code \n}, {@code \u001b}, {@code \u202e}, {@code \U000e0041}), a lone surrogate too. A newline in an appName
 * printed a row of its own making under `connections list`, and one in a rule id a log line of its own; an ESC could
 * drive the reader's terminal. A backslash stays, so that a rule's regex shows as written.
 */
public final class Printable {
    private Printable() {
    }

    public static String of(String text) {
        StringBuilder escaped = null;
        for (int i = 0; i < text.length(); ) {
            int c = text.codePointAt(i);
            int type = Character.getType(c);
            // FORMAT holds the bidi overrides (U+202E) and tag characters, which reorder or hide text; a lone surrogate
            // (SURROGATE: one with no partner) printed as "?", so two ids differing by one showed alike
            boolean control = Character.isISOControl(c) || c == 0x2028 || c == 0x2029 || type == Character.FORMAT
                    || type == Character.SURROGATE;
            if (control && escaped == null) {
                escaped = new StringBuilder(text.length() + 8).append(text, 0, i);
            }
            if (escaped != null) {
                escaped.append(!control ? Character.toString(c) : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t"
                        : c > 0xFFFF ? String.format("\\U%08x", c) : String.format("\\u%04x", c));
            }
            i += Character.charCount(c);
        }
        return escaped == null ? text : escaped.toString();
    }
}
