package io.blackpipe.cli;

import io.blackpipe.admin.AdminHttp;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.bson.BsonDocument;
import org.bson.BsonInvalidOperationException;
import org.bson.BsonValue;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

@Command(name = "health", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "Ask a running proxy whether it is healthy; exit 0 when it answers that its status is ok, 1 when not (for Docker's HEALTHCHECK).")
final class HealthCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    /** As every control command takes them: /health needs no token, but a script passing one to each command may pass it here. */
    @Mixin
    AdminOptions adminOptions;

    @Override
    public Integer call() {
        String base = adminOptions.checkedBaseUrl(spec); // as every control command reads --admin and --admin-token
        try {
            HttpResponse<String> response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build()
                    .send(HttpRequest.newBuilder(URI.create(base + "/health")).timeout(Duration.ofSeconds(2)).build(),
                            HttpResponse.BodyHandlers.ofString());
            PrintWriter out = spec.commandLine().getOut();
            out.print(response.body());
            if (!response.body().endsWith("\n")) { // another server's body: its error went on the same line
                out.println();
            }
            out.flush();
            if (response.statusCode() != 200) {
                return unhealthy(base + "/health answered " + response.statusCode());
            }
            // any web server at --admin answers 200, and some say their status is ok: only a blackpipe gives its connection string
            BsonDocument health = BsonDocument.parse(response.body());
            if (!isOk(health)) {
                return unhealthy(base + "/health did not say its status is ok");
            }
            return health.isString("connectionString") ? 0
                    : unhealthy(base + "/health said ok but gave no connectionString: no blackpipe answered there");
        } catch (HttpTimeoutException e) {
            return unhealthy(base + " did not answer within 2 s");
        } catch (IOException e) {
            // it printed the exception ("java.net.ConnectException"), where the control commands say "connection refused"
            return unhealthy(base + " did not answer: " + AdminHttp.describe(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return unhealthy("interrupted while waiting for " + base);
        }
    }

    private static boolean isOk(BsonDocument health) {
        BsonValue status = health.get("status");
        if (status == null || !status.isString()) {
            throw new BsonInvalidOperationException("no status string in " + health.toJson());
        }
        return status.asString().getValue().equals("ok");
    }

    private int unhealthy(String why) {
        PrintWriter err = spec.commandLine().getErr();
        err.println("blackpipe: " + why);
        err.flush();
        return 1;
    }
}
