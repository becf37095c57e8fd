package io.blackpipe.admin;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.json.JsonParseException;

/**
 * The client side of the admin API: requests to a running proxy's /api/v1 (and /health), with its
 * bearer token. The CLI's control commands and {@code RemoteBlackPipe} both talk through it, so
 * both say the same thing when it goes wrong: every failure (unreachable, timed out, non-2xx answer,
 * unreadable body) is a {@link Failure} whose message names the request, the status and the API's
 * own error message.
 */
public final class AdminHttp {
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    /** A request that did not work; the message is what a user reads. */
    public static final class Failure extends RuntimeException {
        private final int status;

        Failure(int status, String message) {
            super(message);
            this.status = status;
        }

        /** The HTTP status the API answered; 0 when it did not answer (unreachable, timed out, interrupted). */
        public int status() {
            return status;
        }
    }

    /** What the API answered: status and body. */
    public record Answer(int status, String body) {
        public boolean ok() {
            return status >= 200 && status < 300;
        }
    }

    /** The admin server's port when none is given (the CLI's --admin-port default). */
    public static final int DEFAULT_PORT = 9090;

    private final String base;
    private final String token;
    private final String unreachableHint;
    private final String tokenHint;

    /**
     * @param base            the admin URL without a trailing slash, e.g. http://127.0.0.1:9090
     * @param token           the bearer token; null or empty: none is sent
     * @param unreachableHint appended when the proxy cannot be reached: where the caller sets the address
     * @param tokenHint       appended to a 401: where the caller sets the token
     */
    public AdminHttp(String base, String token, String unreachableHint, String tokenHint) {
        this.base = base;
        this.token = token == null || token.isEmpty() ? null : token;
        this.unreachableHint = unreachableHint;
        this.tokenHint = tokenHint;
    }

    public String base() {
        return base;
    }

    /**
     * An admin address as a base URL without a trailing slash: http:// is added when no scheme is given (127.0.0.1:9090,
     * localhost:9090), and then without a port the admin server's default, 9090 (not HTTP's 80); a path is kept (a reverse proxy's prefix), but one that ends in the API's own /api/v1, which every
     * request adds, is refused naming the address without it. Anything but http(s)://host[:port][/path] is an
     * IllegalArgumentException saying what one looks like.
     */
    public static String baseUrl(String admin) {
        String text = admin == null ? "" : admin.strip();
        if (!text.contains("://")) {
            text = "http://" + text;
        }
        text = text.replaceAll("/+$", "");
        URI uri;
        try {
            uri = URI.create(text);
        } catch (IllegalArgumentException e) {
            uri = null;
        }
        String authority = text.substring(text.indexOf("://") + 3).split("/", 2)[0];
        if (authority.indexOf('@') >= 0) { // it was taken and never sent, and error messages quoted its password
            throw new IllegalArgumentException("'" + text.substring(0, text.indexOf("://") + 3) + "…" + authority.substring(authority.lastIndexOf('@'))
                    + "' carries user info, which the admin API does not read: give its token with --admin-token (BLACKPIPE_ADMIN_TOKEN)");
        }
        String hostPort = authority;
        // unbracketed hex digits with a "::" or four colons and more: an IPv6 address (no Netty here: the commands load none)
        if (!hostPort.startsWith("[") && hostPort.matches("[0-9A-Fa-f:.%]+")
                && (hostPort.contains("::") || hostPort.chars().filter(c -> c == ':').count() >= 4)) {
            throw new IllegalArgumentException("'" + admin + "' is not a URL such as http://127.0.0.1:9090: an IPv6 address goes"
                    + " in brackets (http://[::1]:9090)");
        }
        if (uri != null && (uri.getPort() == 0 || uri.getPort() > 65_535)) {
            throw new IllegalArgumentException("'" + admin + "' is not a URL such as http://127.0.0.1:9090: port " + uri.getPort()
                    + " is out of range 1-65535");
        }
        if (uri == null || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null
                || uri.getQuery() != null || uri.getFragment() != null) {
            throw new IllegalArgumentException("'" + admin + "' is not a URL such as http://127.0.0.1:9090");
        }
        if (text.endsWith("/api/v1")) {
            throw new IllegalArgumentException("'" + admin + "' names the API's path, which every request adds; give the admin"
                    + " address: " + text.substring(0, text.length() - "/api/v1".length()));
        }
        if (uri.getRawAuthority().endsWith(":")) { // "localhost:" became "localhost::9090", and a stack trace
            throw new IllegalArgumentException("'" + admin + "' is not a URL such as http://127.0.0.1:9090: the port after ':' is missing");
        }
        if (!admin.contains("://") && uri.getPort() == -1) { // "localhost": the admin server's port, not HTTP's 80
            return uri.getScheme() + "://" + uri.getRawAuthority() + ":" + DEFAULT_PORT + (uri.getRawPath() == null ? "" : uri.getRawPath());
        }
        return text;
    }

    /** Percent-encodes one path segment or query value. */
    public static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * Sends {@code method path}: a path under /api/v1 ("rules"), or one from the root when it starts with
     * '/' ("/health"). Any answer is returned; only no answer at all is a Failure (status 0).
     */
    public Answer send(String method, String path, String body) {
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
            throw new Failure(0, method + " " + url(path) + " did not answer within " + REQUEST_TIMEOUT.toSeconds() + " s");
        } catch (IOException e) {
            throw unreachable(describe(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failure(0, "interrupted while waiting for " + url(path));
        }
    }

    /**
     * GET {@code path} as a stream of lines (history?follow=true): {@code opened} runs once the server has said yes (a
     * 2xx head), then each line goes to {@code line} as it arrives,
     * until the server ends the answer (returns) or the connection breaks (a Failure). Only the answer's head
     * must come within the request timeout: the body may take as long as the server streams it.
     */
    public void streamLines(String path, Runnable opened, Consumer<String> line) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url(path))).GET();
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpResponse<Stream<String>> response;
        try {
            response = HTTP.sendAsync(request.build(), HttpResponse.BodyHandlers.ofLines())
                    .get(REQUEST_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new Failure(0, "GET " + url(path) + " did not answer within " + REQUEST_TIMEOUT.toSeconds() + " s");
        } catch (ExecutionException e) {
            throw unreachable(e.getCause() instanceof IOException io ? describe(io) : String.valueOf(e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failure(0, "interrupted while waiting for " + url(path));
        }
        try (Stream<String> lines = response.body()) {
            if (response.statusCode() < 200 || response.statusCode() >= 300) {
                throw refused("GET", path, new Answer(response.statusCode(), lines.collect(Collectors.joining("\n"))));
            }
            opened.run();
            lines.forEach(line);
        } catch (UncheckedIOException e) {
            throw new Failure(0, "the stream of " + url(path) + " ended (" + describe(e.getCause()) + "); did the proxy stop?");
        }
    }

    /** Like {@link #send}, and a non-2xx answer is a Failure too. */
    public Answer call(String method, String path, String body) {
        Answer answer = send(method, path, body);
        if (!answer.ok()) {
            throw refused(method, path, answer);
        }
        return answer;
    }

    /** Like {@link #call} and parses the JSON body. */
    public BsonDocument json(String method, String path, String body) {
        return parsed(method, path, call(method, path, body));
    }

    /** {@code answer}'s JSON body; one that is not JSON (another server's page) is a Failure saying so. */
    public BsonDocument parsed(String method, String path, Answer answer) {
        try {
            return BsonDocument.parse(answer.body());
        } catch (JsonParseException | org.bson.BsonInvalidOperationException e) {
            throw new Failure(answer.status(), method + " " + url(path) + " answered " + answer.status()
                    + " with a body that is not JSON: " + abbreviate(answer.body()));
        }
    }

    /** The Failure a non-2xx {@code answer} is: "METHOD URL answered 400 Bad Request: the API's message". */
    public Failure refused(String method, String path, Answer answer) {
        return new Failure(answer.status(), method + " " + url(path) + " answered " + answer.status() + reason(answer.status())
                + ": " + errorMessage(answer) + (answer.status() == 401 ? tokenHint : ""));
    }

    private String url(String path) {
        return path.startsWith("/") ? base + path : base + "/api/v1/" + path;
    }

    private Failure unreachable(String why) {
        return new Failure(0, "cannot reach the blackpipe admin API at " + base + " (" + why + "); is a proxy running there?"
                + unreachableHint);
    }

    /** Why a request got no answer, in words ("connection refused"), not an exception's class name. */
    public static String describe(IOException e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof java.nio.channels.UnresolvedAddressException || cause instanceof java.net.UnknownHostException) {
                return "its host name does not resolve"; // not a refusal: a typo'd name (the ConnectException around it has no message)
            }
        }
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

    /** How the API names a scenario sent as a request's body in its errors: "request body:4: timeline[0]...". */
    public static final String SCENARIO_SOURCE = "request body";

    /** {@code message}, the API's refusal of a scenario sent from {@code file}, naming the file on each error's line. */
    public static String namingTheScenarioFile(String message, String file) {
        return message.replaceAll("(: |\n)" + Pattern.quote(SCENARIO_SOURCE) + ":", "$1" + Matcher.quoteReplacement(file) + ":");
    }

    /** The API's "error" field, else the body itself. */
    public static String errorMessage(Answer answer) {
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
