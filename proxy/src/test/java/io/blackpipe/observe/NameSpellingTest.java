package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Test;

class NameSpellingTest {
    @Test
    void theDistanceCountsASwapOfNeighboursAsOneEdit() {
        assertEquals(1, NameSpelling.distance("insret", "insert"));
        assertEquals(0, NameSpelling.distance("find", "find"));
        assertEquals(3, NameSpelling.distance("", "abc"));
        assertEquals(3, NameSpelling.distance("ab", "bacd"), "a swap, then two letters added");
    }

    @Test
    void aNameIsGuessedFromTheGivenNamesOnly() {
        List<String> outcomes = List.of("ok", "error", "network_error", "no_reply");
        assertEquals("network_error", NameSpelling.likelyMeant("networkError", outcomes), "a case and a letter");
        assertEquals("no_reply", NameSpelling.likelyMeant("noreply", outcomes));
        assertNull(NameSpelling.likelyMeant("ok", outcomes), "a name given is no misspelling");
        assertNull(NameSpelling.likelyMeant("timeout", outcomes), "nothing near");
        assertNull(NameSpelling.likelyMeant("", outcomes));
        assertNull(NameSpelling.likelyMeant(null, outcomes));
        assertEquals("error", NameSpelling.likelyMeant("eror", outcomes), "one edit");
        assertNull(NameSpelling.likelyMeant("x", List.of("ok")), "two edits from a short name: too far to guess");
        assertNull(NameSpelling.likelyMeant("db9:27017", List.of("db1:27017", "db2:27017", "primary")), "as near to two: no guess");
        assertEquals("db1:27017", NameSpelling.likelyMeant("db1:2707", List.of("db1:27017", "db2:27017")), "nearer to one");
    }
}
