package io.blackpipe.admin;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** An API path's segments, each percent-decoded on its own, so that a rule id may hold an encoded '/'. */
final class PathSegments {
    private PathSegments() {
    }

    /** The segments of {@code rawPath} ('+' stays a '+': this is a path, not a form). */
    static List<String> decoded(String rawPath) {
        List<String> parts = new ArrayList<>();
        for (String segment : rawPath.split("/", -1)) {
            parts.add(decodedSegment(segment));
        }
        return parts;
    }

    /** The segment with the bytes sent raw (beyond ASCII) percent-encoded: the message shows what was sent, not a guess. */
    static String asSent(String segment) {
        StringBuilder shown = new StringBuilder();
        segment.chars().forEach(c -> shown.append(c < 0x80 ? String.valueOf((char) c) : String.format("%%%02X", c & 0xFF)));
        return shown.toString();
    }

    /**
     * A segment's text: its percent-escapes and the bytes sent raw are UTF-8. Bytes that are no UTF-8 are refused: URLDecoder made each
     * one U+FFFD, so "bad%FF" and "bad%FE" named the same rule.
     */
    private static String decodedSegment(String segment) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(segment.length());
        for (int i = 0; i < segment.length(); i++) {
            char c = segment.charAt(i);
            if (c != '%') { // a byte sent raw: the request line is read a byte a character (ISO-8859-1)
                bytes.write(c <= 0xFF ? c : '?');
                continue;
            }
            int high = i + 2 < segment.length() ? Character.digit(segment.charAt(i + 1), 16) : -1;
            int low = high < 0 ? -1 : Character.digit(segment.charAt(i + 2), 16);
            if (low < 0) {
                throw new IllegalArgumentException("segment '" + segment + "' is not percent-encoded properly");
            }
            bytes.write(high * 16 + low);
            i += 2;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("segment '" + asSent(segment) + "' is not UTF-8 once decoded");
        }
    }
}
