package io.blackpipe;

import io.blackpipe.admin.AdminHttp;
import java.nio.file.Path;
import org.bson.BsonDocument;

/**
 * The admin API as {@link RemoteBlackPipe} calls it, its refusals raised as BlackPipe raises them: 400 and 404 (a bad
 * rule, an unknown member, rule id or bundled scenario) as an {@link IllegalArgumentException}; anything else (409, 401,
 * no answer) as an {@link IllegalStateException}, the state of things.
 */
final class AdminCalls {
    private final AdminHttp http;

    AdminCalls(AdminHttp http) {
        this.http = http;
    }

    String base() {
        return http.base();
    }

    /** The answer whatever its status; only no answer at all is raised. */
    AdminHttp.Answer send(String method, String path) {
        try {
            return http.send(method, path, null);
        } catch (AdminHttp.Failure e) {
            throw translated(e, e.getMessage());
        }
    }

    /** A 2xx answer, else raised. */
    AdminHttp.Answer call(String method, String path) {
        try {
            return http.call(method, path, null);
        } catch (AdminHttp.Failure e) {
            throw translated(e, e.getMessage());
        }
    }

    /** A 2xx answer's JSON, else raised. */
    BsonDocument json(String method, String path, String body) {
        try {
            return http.json(method, path, body);
        } catch (AdminHttp.Failure e) {
            throw translated(e, e.getMessage());
        }
    }

    /** Starts the scenario {@code text}, read from {@code file}: a refusal names the file where the API says "request body". */
    void runScenario(String text, Path file) {
        try {
            http.call("POST", "scenario", text);
        } catch (AdminHttp.Failure e) {
            throw translated(e, AdminHttp.namingTheScenarioFile(e.getMessage(), file.toString()));
        }
    }

    /** What {@code answer}, not 2xx, to {@code method path} says, raised as the others. */
    RuntimeException refused(String method, String path, AdminHttp.Answer answer) {
        AdminHttp.Failure e = http.refused(method, path, answer);
        return translated(e, e.getMessage());
    }

    private static RuntimeException translated(AdminHttp.Failure e, String message) {
        return e.status() == 400 || e.status() == 404 ? new IllegalArgumentException(message, e) : new IllegalStateException(message, e);
    }
}
