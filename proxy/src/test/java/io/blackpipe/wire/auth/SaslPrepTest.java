package io.blackpipe.wire.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** SASLprep against RFC 4013's examples, more of RFC 3454's tables, and the Java driver's own SASLprep. */
class SaslPrepTest {
    private static void assertRefused(String value, String reason) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SaslPrep.prepare(value));
        assertTrue(e.getMessage().contains(reason), () -> "expected '" + reason + "' in: " + e.getMessage());
        assertTrue(e.getMessage().startsWith("the password cannot be prepared with SASLprep (RFC 4013)"), e.getMessage());
    }

    @Test
    void rfc4013Examples() {
        assertEquals("IX", SaslPrep.prepare("I\u00ADX"), "SOFT HYPHEN mapped to nothing");
        assertEquals("user", SaslPrep.prepare("user"), "no transformation");
        assertEquals("USER", SaslPrep.prepare("USER"), "case preserved");
        assertEquals("a", SaslPrep.prepare("\u00AA"), "output is NFKC, input in ISO 8859-1");
        assertEquals("IX", SaslPrep.prepare("\u2168"), "output is NFKC, will match 1st example");
        assertRefused("\u0007", "U+0007, a control character");
        assertRefused("\u0627\u0031", "right-to-left text must start and end with a right-to-left character");
    }

    @Test
    void theAuthSpecsSaslprepUsersPasswords() {
        // The MongoDB Authentication spec's test plan: both forms of each password are the same password.
        assertEquals(SaslPrep.prepare("IX"), SaslPrep.prepare("I\u00ADX"));
        assertEquals(SaslPrep.prepare("IV"), SaslPrep.prepare("\u2163"));
        assertEquals("IV", SaslPrep.prepare("I\u00ADV"));
    }

    @Test
    void nonAsciiSpacesBecomeSpacesAndJoinersDisappear() {
        assertEquals("a b c d", SaslPrep.prepare("a\u00A0b\u3000c\u2003d"));
        assertEquals("ab", SaslPrep.prepare("a\u200Db\uFEFF"));
        assertEquals("ab", SaslPrep.prepare("a\uFE0Fb\u034F"));
    }

    @Test
    void prohibitedCharactersAreRefusedByKind() {
        assertRefused("pass\u0000word", "U+0000, a control character");
        assertRefused("a\u0085", "U+0085, a control character");
        assertRefused("a\u2028", "a control character");
        assertRefused("a\uE000", "U+E000, a private-use character");
        assertRefused("a" + new String(Character.toChars(0xF0000)), "U+F0000, a private-use character");
        assertRefused("a\uFDD0", "a non-character code point");
        assertRefused("a" + new String(Character.toChars(0x1FFFE)), "a non-character code point");
        assertRefused("a\uD800b", "U+D800, a lone surrogate");
        assertRefused("a\uFFFC", "inappropriate for plain text");
        assertRefused("a\u2FF0", "an ideographic description character");
        assertRefused("a\u200E", "changes display direction");
        assertRefused("a" + new String(Character.toChars(0xE0041)), "a tagging character");
        assertRefused("a\u0378", "U+0378, an unassigned code point");
    }

    @Test
    void bidirectionalRules() {
        assertEquals("\u0627\u0031\u0628", SaslPrep.prepare("\u0627\u0031\u0628"), "RandAL at both ends, a digit between");
        assertRefused("\u0627a\u0628", "mixes right-to-left and left-to-right");
        assertRefused("1\u0627", "must start and end with a right-to-left character");
        assertEquals("\u05D0\u05D1", SaslPrep.prepare("\u05D0\u05D1"), "Hebrew alone is fine");
    }

    @Test
    void theMessageNeverQuotesThePassword() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SaslPrep.prepare("secretword\u0007"));
        assertFalse(e.getMessage().contains("secretword"), e.getMessage());
    }

    /**
     * The real Java driver's SASLprep (what a MongoClient does to a SCRAM-SHA-256 password) agrees
     * with ours on every value: the same result or both refusing.
     */
    @Test
    void agreesWithTheJavaDriversSaslPrep() {
        List<String> values = List.of("pencil", "I\u00ADX", "\u00AA", "\u2168", "\u2163", "a\u00A0b", "a\u1680b", "x\u200By",
                "\uFB01ne", "\u1E9B\u0323", "Ke\u0301vin", "\u0007", "a\uE000", "\u0627\u0031", "\u0627\u0031\u0628",
                "\u0627a\u0628", "a\uFFFD", "p@ss:w/rd%", "\u00DFtra\u00DFe", "\u3000", "\u2FF0", "\u0340", "a\u0378",
                "\uFF21\uFF22", "\u00BD", "e\u0301", "tab\there");
        for (String value : values) {
            String ours = prepared(() -> SaslPrep.prepare(value));
            String drivers = prepared(() -> com.mongodb.internal.authentication.SaslPrep.saslPrepStored(value));
            assertEquals(drivers, ours, () -> "SASLprep of " + value.codePoints().mapToObj(cp -> String.format("U+%04X", cp)).toList());
        }
    }

    private static String prepared(java.util.function.Supplier<String> prep) {
        try {
            return prep.get();
        } catch (IllegalArgumentException e) {
            return "(refused)";
        }
    }
}
