package io.blackpipe.admin;

import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * One resource of the control API: the methods it answers and the query parameters it reads. Another
 * method is a 405 that lists the allowed ones (in Allow, as HTTP requires); another parameter, or one
 * given twice, is a 400 naming it, never ignored: `outage?durration=1s` would otherwise last until
 * restore, and `connections/reset?membr=primary` reset every member.
 */
record AdminRoute(List<HttpMethod> methods, Set<String> parameters, Set<HttpMethod> readBody,
                  Function<HttpMethod, AdminResponse> handler) {

    static AdminRoute get(Supplier<AdminResponse> handler) {
        return get(Set.of(), handler);
    }

    static AdminRoute get(Set<String> parameters, Supplier<AdminResponse> handler) {
        return new AdminRoute(List.of(HttpMethod.GET), parameters, Set.of(), method -> handler.get());
    }

    static AdminRoute post(Supplier<AdminResponse> handler) {
        return post(Set.of(), handler);
    }

    static AdminRoute post(Set<String> parameters, Supplier<AdminResponse> handler) {
        return new AdminRoute(List.of(HttpMethod.POST), parameters, Set.of(), method -> handler.get());
    }

    /** A POST whose body is what it takes (a scenario to validate). */
    static AdminRoute postWithBody(Supplier<AdminResponse> handler) {
        return new AdminRoute(List.of(HttpMethod.POST), Set.of(), Set.of(HttpMethod.POST), method -> handler.get());
    }

    /**
     * The handler's answer, or the 405 or 400 that the method, the query or the body earns; null for a stream. A body
     * where the method reads none is refused, not ignored: `outage` with {"duration": "5s"} would last until restore.
     */
    AdminResponse answer(HttpMethod method, String rawPath, Map<String, List<String>> query, String body) {
        if (!methods.contains(method)) {
            String allowed = methods.stream().map(HttpMethod::name).collect(Collectors.joining(", "));
            return AdminResponse.error(HttpResponseStatus.METHOD_NOT_ALLOWED,
                    method + " is not allowed on " + rawPath + " (allowed: " + allowed + ")").withHeader("Allow", allowed);
        }
        for (Map.Entry<String, List<String>> parameter : query.entrySet()) {
            String name = parameter.getKey();
            if (!parameters.contains(name)) {
                return AdminResponse.error(HttpResponseStatus.BAD_REQUEST, "query parameter '" + name + "': unknown on " + rawPath
                        + (parameters.isEmpty() ? ", which takes none" : " (it takes " + String.join(", ", new TreeSet<>(parameters)) + ")"));
            }
            if (parameter.getValue().size() > 1) {
                return AdminResponse.error(HttpResponseStatus.BAD_REQUEST, "query parameter '" + name + "': given "
                        + parameter.getValue().size() + " times; give it once");
            }
        }
        if (!body.isBlank() && !readBody.contains(method)) {
            return AdminResponse.error(HttpResponseStatus.BAD_REQUEST, "body: " + method + " " + rawPath
                    + " takes none" + (parameters.isEmpty() ? "" : " (its options go in the query: " + String.join(", ", new TreeSet<>(parameters)) + ")"));
        }
        return handler.apply(method);
    }
}
