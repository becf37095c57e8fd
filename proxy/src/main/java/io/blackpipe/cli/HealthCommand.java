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
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "health", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "Ask a running proxy whether it is healthy; exit 0 when it answers that its status is ok, 1 when not (for Docker's HEALTHCHECK).")
final class HealthCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--admin", paramLabel = "URL", defaultValue = "${env:BLACKPIPE_ADMIN:-http://127.0.0.1:9090}",
            description = "Admin URL of the running proxy (env BLACKPIPE_ADMIN; default ${DEFAULT-VALUE}).")
    String admin;

    @Override
    public Integer call() {
        String base = AdminOptions.baseUrl(spec, admin); // as every control command reads --admin
        try {
            HttpResponse<String> response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build()
                    .send(HttpRequest.newBuilder(URI.create(base + "/health")).timeout(Duration.ofSeconds(2)).build(),
                            HttpResponse.BodyHandlers.ofString());
            PrintWriter out = spec.commandLine().getOut();
            out.print(response.body());
            out.flush();
            if (response.statusCode() != 200) {
                return unhealthy(base + "/health answered " + response.statusCode());
            }
            // any web server at --admin answers 200; only a blackpipe says its status is ok
            return isOk(BsonDocument.parse(response.body())) ? 0 : unhealthy(base + "/health did not say its status is ok");
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
