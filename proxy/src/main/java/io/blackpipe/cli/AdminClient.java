package io.blackpipe.cli;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.bson.BsonDocument;
import org.bson.json.JsonParseException;

/**
 * A small client of a running proxy's admin API (/api/v1), for the control commands. Every
 * failure (unreachable, timed out, non-2xx answer, unreadable body) becomes a {@link Failure}
 * whose message is what the user reads: the URL, the status, and the API's own error message.
 */
final class AdminClient {
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    /** A request that did not work; the message is printed as is (exit 1). */
    static final class Failure extends Exception {
        Failure(String message) {
            super(message);
        }
    }

    /** What the API answered: status and body. */
    record Answer(int status, String body) {
        boolean ok() {
            return status >= 200 && status < 300;
        }
    }

    private final String base;
    private final String token;

    /** @param base the admin URL without a trailing slash, e.g. http://127.0.0.1:9090 */
    AdminClient(String base, String token) {
        this.base = base;
        this.token = token == null || token.isEmpty() ? null : token;
    }

    String base() {
        return base;
    }

    /** Percent-encodes one path segment or query value. */
    static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** Sends {@code method path} (path under /api/v1, e.g. "rules"); a non-2xx answer is a Failure. */
    Answer call(String method, String path, String body) throws Failure {
        Answer answer = send(method, path, body);
        if (!answer.ok()) {
            throw new Failure(method + " " + url(path) + " answered " + answer.status() + reason(answer.status())
                    + ": " + errorMessage(answer) + hint(answer.status()));
        }
        return answer;
    }

    /** Like {@link #call} and parses the JSON body. */
    BsonDocument json(String method, String path, String body) throws Failure {
        Answer answer = call(method, path, body);
        try {
            return BsonDocument.parse(answer.body());
        } catch (JsonParseException | org.bson.BsonInvalidOperationException e) {
            throw new Failure(method + " " + url(path) + " answered " + answer.status() + " with a body that is not JSON: "
                    + abbreviate(answer.body()));
        }
    }

    BsonDocument get(String path) throws Failure {
        return json("GET", path, null);
    }

    private String url(String path) {
        return base + "/api/v1/" + path;
    }

    private Answer send(String method, String path, String body) throws Failure {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url(path)))
                .timeout(REQUEST_TIMEOUT)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        try {
            HttpResponse<String> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return new Answer(response.statusCode(), response.body());
        } catch (HttpConnectTimeoutException e) {
            throw unreachable("the connection timed out");
        } catch (HttpTimeoutException e) {
            throw new Failure(method + " " + url(path) + " did not answer within " + REQUEST_TIMEOUT.toSeconds() + " s");
        } catch (IOException e) {
            throw unreachable(describe(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failure("interrupted while waiting for " + url(path));
        }
    }

    private Failure unreachable(String why) {
        return new Failure("cannot reach the blackpipe admin API at " + base + " (" + why + "); is a proxy running there?"
                + " Point --admin or BLACKPIPE_ADMIN at its admin address.");
    }

    private static String describe(IOException e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof java.net.ConnectException) {
                return cause.getMessage() == null || cause.getMessage().isBlank() ? "connection refused" : cause.getMessage();
            }
        }
        Throwable cause = e;
        while (cause.getCause() != null && (cause.getMessage() == null || cause.getMessage().isBlank())) {
            cause = cause.getCause();
        }
        String message = cause.getMessage();
        return message == null || message.isBlank() ? cause.getClass().getSimpleName() : message;
    }

    private static String reason(int status) {
        switch (status) {
            case 400: return " Bad Request";
            case 401: return " Unauthorized";
            case 404: return " Not Found";
            case 405: return " Method Not Allowed";
            case 409: return " Conflict";
            default: return "";
        }
    }

    private static String hint(int status) {
        return status == 401 ? " (give the proxy's token with --admin-token or BLACKPIPE_ADMIN_TOKEN)" : "";
    }

    /** The API's "error" field, else the body itself. */
    private static String errorMessage(Answer answer) {
        try {
            BsonDocument body = BsonDocument.parse(answer.body());
            if (body.isString("error")) {
                return body.getString("error").getValue();
            }
        } catch (RuntimeException notJson) {
            // fall through: show the body as it came
        }
        return abbreviate(answer.body());
    }

    private static String abbreviate(String body) {
        String text = body == null ? "" : body.strip();
        return text.length() > 300 ? text.substring(0, 300) + "..." : text.isEmpty() ? "(empty body)" : text;
    }
}
