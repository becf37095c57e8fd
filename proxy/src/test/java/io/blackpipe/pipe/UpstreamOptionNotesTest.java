package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * What the proxy says of the upstream URI's options comes once per JVM: `report` and test suites
 * start a proxy per case on one URI, and a misspelt option warned of in every case buried the rest.
 */
class UpstreamOptionNotesTest {
    @Test
    void aMisspeltOptionIsWarnedOfOnceHoweverManyProxiesStartOnTheUri() {
        String option = "replSet" + UUID.randomUUID().toString().substring(0, 8); // this test's own: no other test said it
        String lane = UpstreamLane.uri();
        String uri = lane + (lane.contains("?") ? "&" : lane.endsWith("/") ? "?" : "/?") + option + "=rs0&readPreference=primary";
        try (LogCapture log = LogCapture.start()) {
            for (int i = 0; i < 3; i++) {
                try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(uri))) {
                    assertFalse(proxy.members().isEmpty(), "the proxy started despite the unknown option");
                }
            }
            List<String> warnings = log.messages().stream()
                    .filter(m -> m.equals("the upstream URI option " + option + " is no MongoDB connection string option"
                            + " (misspelt? names are case-insensitive): ignored")).toList();
            assertEquals(1, warnings.size(), String.join("\n", log.messages()));
        }
    }
}
