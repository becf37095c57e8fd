package io.blackpipe.cli;

import io.blackpipe.admin.AdminHttp;
import java.util.function.Function;
import org.bson.BsonDocument;

/**
 * The control commands' client of a running proxy's admin API (/api/v1): {@link AdminHttp} with the
 * CLI's hints, its failures as a checked {@link Failure}, so that every command says what went wrong
 * and exits 1. The message is what the user reads: the URL, the status, and the API's own error message.
 */
final class AdminClient {
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

    /** How the API's refusal of a member name it does not know begins (after a field's name, if any). */
    private static final String UNKNOWN_MEMBER = "no member '";

    private final AdminHttp http;

    /**
     * @param base the admin URL without a trailing slash, e.g. http://127.0.0.1:9090
     * @param whereFrom said when the proxy cannot be reached, before how to point the commands elsewhere: where the
     *                  address came from when no --admin or BLACKPIPE_ADMIN gave it; "" when one did
     */
    AdminClient(String base, String token, String whereFrom) {
        this.http = new AdminHttp(base, token, whereFrom + " Point --admin or BLACKPIPE_ADMIN at its admin address.",
                " (give the proxy's token with --admin-token or BLACKPIPE_ADMIN_TOKEN)");
    }

    String base() {
        return http.base();
    }

    /** Percent-encodes one path segment or query value. */
    static String encode(String value) {
        return AdminHttp.encode(value);
    }

    /** Sends {@code method path} (path under /api/v1, e.g. "rules"); a non-2xx answer is a Failure. */
    Answer call(String method, String path, String body) throws Failure {
        Answer answer = send(method, path, body);
        if (!answer.ok()) {
            throw refused(method, path, answer);
        }
        return answer;
    }

    /**
     * Like {@link #call}, for a request about one member: the proxy's refusal of a member it does not front ("no member
     * 'db9:27017' (known: ...)") is what {@code unknownMember} makes of that message, a usage error naming the argument, as
     * a misspelt flag's is (only the proxy knows its members); a member's state ("no member is primary") stays a Failure.
     */
    Answer callOnMember(String method, String path, Function<String, RuntimeException> unknownMember) throws Failure {
        Answer answer = send(method, path, null);
        if (!answer.ok()) {
            String error = AdminHttp.errorMessage(new AdminHttp.Answer(answer.status(), answer.body()));
            int unknown = error.indexOf(UNKNOWN_MEMBER);
            if (unknown >= 0) {
                throw unknownMember.apply(error.substring(unknown));
            }
            throw refused(method, path, answer);
        }
        return answer;
    }

    /** Sends {@code method path}; any answer is returned, a proxy that does not answer is a Failure. */
    Answer send(String method, String path, String body) throws Failure {
        try {
            AdminHttp.Answer answer = http.send(method, path, body);
            return new Answer(answer.status(), answer.body());
        } catch (AdminHttp.Failure e) {
            throw new Failure(e.getMessage());
        }
    }

    /** The Failure a non-2xx {@code answer} to {@code method path} is, as {@link #call} throws it. */
    Failure refused(String method, String path, Answer answer) {
        return new Failure(http.refused(method, path, new AdminHttp.Answer(answer.status(), answer.body())).getMessage());
    }

    /**
     * GET {@code path} line by line as the server streams it (history?follow=true), {@code opened} first once it
     * answered 2xx; returns when it ends the stream.
     */
    void streamLines(String path, Runnable opened, java.util.function.Consumer<String> line) throws Failure {
        try {
            http.streamLines(path, opened, line);
        } catch (AdminHttp.Failure e) {
            throw new Failure(e.getMessage());
        }
    }

    /** Like {@link #call} and parses the JSON body. */
    BsonDocument json(String method, String path, String body) throws Failure {
        try {
            return http.json(method, path, body);
        } catch (AdminHttp.Failure e) {
            throw new Failure(e.getMessage());
        }
    }

    /** {@code answer}'s JSON body; one that is not JSON is a Failure, as {@link #json} makes it. */
    BsonDocument parsed(String method, String path, Answer answer) throws Failure {
        try {
            return http.parsed(method, path, new AdminHttp.Answer(answer.status(), answer.body()));
        } catch (AdminHttp.Failure e) {
            throw new Failure(e.getMessage());
        }
    }

    BsonDocument get(String path) throws Failure {
        return json("GET", path, null);
    }
}
