package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.UpstreamUri;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The Docker image binds the admin API to 0.0.0.0 with no token, and a missing CI secret (BLACKPIPE_ADMIN_TOKEN empty)
 * leaves any API open: nothing said that whoever reaches the address can add faults and fail members over. A CLI
 * proxy whose admin API listens beyond loopback with no token now says so at start, with the ways out.
 */
class OpenAdminWarningTest {
    private static final String SAID = "with no --admin-token: whoever reaches that address can add faults";

    @ParameterizedTest(name = "--admin-host {0}, token {1}: warned {2}")
    @CsvSource({"0.0.0.0, '', true", "0.0.0.0, s3cret, false", "127.0.0.1, '', false", "localhost, '', false", "::1, '', false"})
    void anAdminApiOpenBeyondThisHostIsSaidAtStart(String adminHost, String token, boolean warned) throws Exception {
        ProxyConfig config = new ProxyConfig(UpstreamUri.parse(UpstreamLane.uri()), "127.0.0.1", 0, null, adminHost, 0, Map.of(), 5000);
        try (LogCapture log = LogCapture.start();
             RunningProxy running = RunningProxy.start(config, token.isEmpty() ? null : token)) {
            if (warned) {
                String line = log.awaitContaining(Duration.ofSeconds(5), SAID);
                assertTrue(line.startsWith("the admin API listens on 0.0.0.0:" + running.admin.port() + " "), line);
                assertTrue(line.contains("BLACKPIPE_ADMIN_TOKEN") && line.contains("-p 127.0.0.1:9090:9090"), line);
            } else {
                assertEquals(0, log.messages().stream().filter(m -> m.contains(SAID)).count(), String.join("\n", log.messages()));
            }
        }
    }
}
