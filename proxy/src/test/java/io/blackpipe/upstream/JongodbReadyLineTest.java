package io.blackpipe.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class JongodbReadyLineTest {

    @Test
    void parsesTheLineJongodbPrints() {
        JongodbReadyLine line = JongodbReadyLine.parse("JONGODB_URI=mongodb://127.0.0.1:40123/test?replicaSet=jongodb-rs0").orElseThrow();
        assertEquals("127.0.0.1", line.host());
        assertEquals(40123, line.port());
        assertEquals("jongodb-rs0", line.replicaSet());
        assertEquals("mongodb://127.0.0.1:40123/?replicaSet=jongodb-rs0", line.uri());
    }

    @Test
    void keepsACustomSetNameAndToleratesOtherParametersAndTrailingSpace() {
        JongodbReadyLine line = JongodbReadyLine.parse("JONGODB_URI=mongodb://localhost:27999/db?a=1&replicaSet=rsx&b=2  ").orElseThrow();
        assertEquals("localhost", line.host());
        assertEquals(27999, line.port());
        assertEquals("rsx", line.replicaSet());
    }

    @Test
    void standaloneHasNoReplicaSetInItsUri() {
        JongodbReadyLine line = JongodbReadyLine.parse("JONGODB_URI=mongodb://127.0.0.1:5000").orElseThrow();
        assertNull(line.replicaSet());
        assertEquals("mongodb://127.0.0.1:5000/", line.uri());
    }

    @Test
    void rejectsOtherLinesAndMalformedOnes() {
        assertEquals(Optional.empty(), JongodbReadyLine.parse("jongodb tcp request failed: boom"));
        assertEquals(Optional.empty(), JongodbReadyLine.parse("JONGODB_URI=mongodb://127.0.0.1/test"));
        assertEquals(Optional.empty(), JongodbReadyLine.parse("JONGODB_URI=mongodb://127.0.0.1:0/test"));
        assertEquals(Optional.empty(), JongodbReadyLine.parse("JONGODB_URI=mongodb://127.0.0.1:99999/test"));
        assertEquals(Optional.empty(), JongodbReadyLine.parse("JONGODB_URI=mongodb://a:1,b:2/?replicaSet=x"));
        assertEquals(Optional.empty(), JongodbReadyLine.parse(null));
        assertTrue(JongodbReadyLine.isReadyLine("JONGODB_URI=garbage"));
        assertFalse(JongodbReadyLine.isReadyLine("  JONGODB_URI=indented"));
    }
}
