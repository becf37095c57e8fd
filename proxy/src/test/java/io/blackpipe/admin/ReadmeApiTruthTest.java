package io.blackpipe.admin;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.Readme;
import io.blackpipe.testing.Readme.Paragraph;
import io.netty.handler.codec.http.HttpMethod;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * README.md's table of the control API's resources is the API: every row's paths exist with exactly
 * the methods it gives and the query parameters each reads, every resource the API serves has a row,
 * and every `METHOD /api/v1/...` or `/api/v1/...?param=` written anywhere else names a route that takes it.
 */
class ReadmeApiTruthTest {
    private static final String SECTION = "Control a running proxy";
    private static final Pattern METHOD = Pattern.compile("GET|POST|PUT|DELETE");
    private static final Pattern PARAMETER = Pattern.compile("^\\?(\\w+)=");
    /** A path written in prose, with the method before it if any; an elided one ("/api/v1/…") is no path. */
    private static final Pattern MENTION = Pattern.compile("(?:\\b(GET|POST|PUT|DELETE) )?/api/v1/([\\w{}%./-]*[\\w}](?:\\?[\\w=&.:-]*)?)");

    private final AdminApi api = new AdminApi(null); // routes are only looked at, never answered: no proxy needed
    private final List<String> problems = new ArrayList<>();

    @Test
    void theApiTableIsWhatTheApiServes() {
        Readme readme = Readme.read();
        Set<String> rowed = new LinkedHashSet<>();
        List<Paragraph> rows = readme.tableRows(SECTION).stream().filter(r -> r.text().contains("/api/v1/")).toList();
        assertTrue(!rows.isEmpty(), "README.md's '" + SECTION + "' has the API table");
        for (Paragraph row : rows) {
            List<String> cells = Readme.cells(row.text());
            String where = "README.md:" + row.line() + ": ";
            Set<String> methods = Readme.spans(cells.get(1)).stream().filter(s -> METHOD.matcher(s).matches()).collect(Collectors.toCollection(TreeSet::new));
            Set<String> parameters = new TreeSet<>();
            Readme.spans(cells.get(1)).forEach(span -> PARAMETER.matcher(span).results().forEach(m -> parameters.add(m.group(1))));
            Set<String> taken = new TreeSet<>();
            for (String path : paths(cells.get(0))) {
                String resource = AdminApi.resourceOf(segments(path));
                if (resource == null) {
                    problems.add(where + "/api/v1/" + path + ": the API serves no such resource (it serves " + AdminApi.RESOURCES + ")");
                    continue;
                }
                rowed.add(resource);
                AdminRoute route = routeOf(resource);
                Set<String> served = route.methods().stream().map(HttpMethod::name).collect(Collectors.toCollection(TreeSet::new));
                if (!served.equals(methods)) {
                    problems.add(where + "/api/v1/" + path + " takes " + served + ", the row says " + methods);
                }
                for (String parameter : route.parameters()) {
                    if (!parameters.contains(parameter)) {
                        problems.add(where + "/api/v1/" + path + " reads ?" + parameter + "=, which the row does not give");
                    }
                }
                taken.addAll(route.parameters());
            }
            parameters.removeAll(taken);
            if (!parameters.isEmpty() && !cells.get(1).contains("is a 400 here")) {
                problems.add(where + "the row gives ?" + parameters + ", which none of its paths reads");
            }
        }
        for (String resource : AdminApi.RESOURCES) {
            if (!rowed.contains(resource)) {
                problems.add("README.md's API table (" + SECTION + ") has no row for /api/v1/" + resource);
            }
        }
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }

    @Test
    void everyApiPathTheReadmeWritesIsServedWithThatMethodAndQuery() {
        List<String> lines = Readme.read().lines();
        for (int index = 0; index < lines.size(); index++) {
            Matcher mention = MENTION.matcher(lines.get(index));
            while (mention.find()) {
                String where = "README.md:" + (index + 1) + ": " + mention.group() + ": ";
                String[] pathAndQuery = mention.group(2).split("\\?", 2);
                String resource = AdminApi.resourceOf(segments(pathAndQuery[0]));
                if (resource == null) {
                    problems.add(where + "the API serves no such resource");
                    continue;
                }
                AdminRoute route = routeOf(resource);
                if (mention.group(1) != null && !route.methods().contains(HttpMethod.valueOf(mention.group(1)))) {
                    problems.add(where + "/api/v1/" + resource + " takes " + route.methods() + ", not " + mention.group(1));
                }
                if (pathAndQuery.length > 1) {
                    for (String parameter : pathAndQuery[1].split("&")) {
                        String name = parameter.split("=", 2)[0];
                        if (!name.isEmpty() && !route.parameters().contains(name)) {
                            problems.add(where + "/api/v1/" + resource + " reads no ?" + name + "= (it reads " + route.parameters() + ")");
                        }
                    }
                }
            }
        }
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }

    @Test
    void everyResourceHasItsRoute() {
        for (String resource : AdminApi.RESOURCES) {
            assertNotNull(routeOf(resource), resource);
        }
    }

    /** The paths of a table row's first cell, without /api/v1/; `.../blackhole` is the previous path's sibling. */
    private static List<String> paths(String cell) {
        List<String> paths = new ArrayList<>();
        for (String span : Readme.spans(cell)) {
            if (span.startsWith("/api/v1/")) {
                paths.add(span.substring("/api/v1/".length()));
            } else if (span.startsWith(".../") && !paths.isEmpty()) {
                String previous = paths.get(paths.size() - 1);
                paths.add(previous.substring(0, previous.lastIndexOf('/') + 1) + span.substring(4));
            }
        }
        return paths;
    }

    private static List<String> segments(String path) {
        return Arrays.stream(path.split("/", -1)).map(s -> URLDecoder.decode(s, StandardCharsets.UTF_8)).toList();
    }

    private AdminRoute routeOf(String resource) {
        return api.route(Arrays.asList(resource.split("/")), "/api/v1/" + resource, Map.of(), "", () -> { }, "127.0.0.1:1");
    }
}
