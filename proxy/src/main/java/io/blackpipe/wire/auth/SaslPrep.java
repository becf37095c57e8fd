package io.blackpipe.wire.auth;

import java.text.Normalizer;

/**
 * SASLprep (RFC 4013, a profile of stringprep, RFC 3454) for SCRAM-SHA-256 passwords, which
 * MongoDB requires so that e.g. "I\u00ADX" and "IX" are the same password: map non-ASCII spaces
 * to ' ' and drop the "commonly mapped to nothing" characters, normalize with NFKC, refuse the
 * prohibited characters and unassigned code points (the rules for stored strings, as the Java
 * driver applies them), and check bidirectional text. The tables are RFC 3454's; NFKC, the
 * unassigned test and character directions come from the JDK's Unicode version, which is newer
 * than the RFC's 3.2, so characters assigned since then are accepted.
 */
public final class SaslPrep {
    private SaslPrep() {
    }

    /**
     * @throws IllegalArgumentException naming the first character SASLprep refuses (by code point, never the whole value)
     */
    public static String prepare(String value) {
        StringBuilder mapped = new StringBuilder(value.length());
        value.codePoints().forEach(cp -> {
            if (nonAsciiSpace(cp)) {
                mapped.append(' ');
            } else if (!mappedToNothing(cp)) {
                mapped.appendCodePoint(cp);
            }
        });
        String normalized = Normalizer.normalize(mapped, Normalizer.Form.NFKC);
        normalized.codePoints().forEach(cp -> {
            String why = prohibited(cp);
            if (why != null) {
                throw new IllegalArgumentException(String.format("the password cannot be prepared with SASLprep (RFC 4013):"
                        + " it contains U+%04X, %s", cp, why));
            }
        });
        checkBidi(normalized);
        return normalized;
    }

    /** RFC 3454 table C.1.2, mapped to SPACE by RFC 4013. */
    private static boolean nonAsciiSpace(int cp) {
        return cp == 0x00A0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200B) || cp == 0x202F || cp == 0x205F || cp == 0x3000;
    }

    /** RFC 3454 table B.1: soft hyphen, joiners, variation selectors, byte order mark, ... */
    private static boolean mappedToNothing(int cp) {
        return cp == 0x00AD || cp == 0x034F || cp == 0x1806 || (cp >= 0x180B && cp <= 0x180D) || (cp >= 0x200B && cp <= 0x200D)
                || cp == 0x2060 || (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0xFEFF;
    }

    /** Why RFC 4013 section 2.3 (tables C.1.2 to C.9) or 2.5 (unassigned, A.1) refuses {@code cp}; null if it does not. */
    private static String prohibited(int cp) {
        if (nonAsciiSpace(cp)) {
            return "a non-ASCII space";
        }
        if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || cp == 0x06DD || cp == 0x070F || cp == 0x180E
                || cp == 0x200C || cp == 0x200D || cp == 0x2028 || cp == 0x2029 || (cp >= 0x2060 && cp <= 0x2063)
                || cp == 0xFEFF || (cp >= 0x1D173 && cp <= 0x1D17A)) {
            return "a control character";
        }
        if ((cp >= 0xE000 && cp <= 0xF8FF) || (cp >= 0xF0000 && cp <= 0xFFFFD) || (cp >= 0x100000 && cp <= 0x10FFFD)) {
            return "a private-use character";
        }
        if ((cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE) {
            return "a non-character code point";
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) {
            return "a lone surrogate (not a character)";
        }
        if (cp >= 0xFFF9 && cp <= 0xFFFD) {
            return "a character inappropriate for plain text";
        }
        if (cp >= 0x2FF0 && cp <= 0x2FFB) {
            return "an ideographic description character";
        }
        if (cp == 0x0340 || cp == 0x0341 || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E)
                || (cp >= 0x206A && cp <= 0x206F)) {
            return "a character that changes display direction or is deprecated";
        }
        if (cp == 0xE0001 || (cp >= 0xE0020 && cp <= 0xE007F)) {
            return "a tagging character";
        }
        if (Character.getType(cp) == Character.UNASSIGNED) {
            return "an unassigned code point";
        }
        return null;
    }

    /** RFC 3454 section 6: right-to-left text may not mix in left-to-right characters and must start and end right-to-left. */
    private static void checkBidi(String value) {
        boolean rightToLeft = value.codePoints().anyMatch(SaslPrep::rightToLeft);
        if (!rightToLeft) {
            return;
        }
        if (value.codePoints().anyMatch(cp -> Character.getDirectionality(cp) == Character.DIRECTIONALITY_LEFT_TO_RIGHT)) {
            throw new IllegalArgumentException("the password cannot be prepared with SASLprep (RFC 4013):"
                    + " it mixes right-to-left and left-to-right characters");
        }
        int first = value.codePointAt(0);
        int last = value.codePointBefore(value.length());
        if (!rightToLeft(first) || !rightToLeft(last)) {
            throw new IllegalArgumentException("the password cannot be prepared with SASLprep (RFC 4013):"
                    + " right-to-left text must start and end with a right-to-left character");
        }
    }

    private static boolean rightToLeft(int cp) {
        byte direction = Character.getDirectionality(cp);
        return direction == Character.DIRECTIONALITY_RIGHT_TO_LEFT || direction == Character.DIRECTIONALITY_RIGHT_TO_LEFT_ARABIC;
    }
}
