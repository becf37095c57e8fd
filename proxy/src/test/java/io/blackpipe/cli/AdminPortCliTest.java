package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.admin.AdminServer;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.UpstreamLane;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * What the admin port serves, as its help says it: /metrics, /health and the control API (the help
 * named only the first two), and /health written as every other admin answer is, indented.
 */
class AdminPortCliTest {
    @Test
    void theAdminPortHelpNamesTheControlApi() {
        CliRun help = CliRun.of("proxy", "--help");
        String described = help.out().replaceAll("\\s+", " ");
        assertTrue(described.contains("--admin-port=<adminPort> Admin HTTP port serving /metrics, /health and the control API (/api/v1/..."),
                help::toString);
    }

    @Test
    void healthIsIndentedAsTheControlApiAnswersAre() throws Exception {
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0, null)) {
            String base = "http://127.0.0.1:" + admin.port();
            HttpClient http = HttpClient.newHttpClient();
            String health = http.send(HttpRequest.newBuilder(URI.create(base + "/health")).build(), HttpResponse.BodyHandlers.ofString()).body();
            String members = http.send(HttpRequest.newBuilder(URI.create(base + "/api/v1/members")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(members.startsWith("{\n  \"members\": ["), members);
            assertTrue(health.startsWith("{\n  \"status\": \"ok\",\n  \"deployment\": "), health);
            assertEquals(proxy.connectionString(), BsonDocument.parse(health).getString("connectionString").getValue());

            CliRun command = CliRun.of("health", "--admin", base); // the Docker HEALTHCHECK's command reads it as before
            assertEquals(0, command.exitCode(), command::toString);
            assertEquals(health, command.out());
        }
    }
}
