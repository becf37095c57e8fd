package io.blackpipe.admin;

import io.blackpipe.fault.BundledScenarios;
import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.fault.JsonDocuments;
import io.blackpipe.fault.Bandwidth;
import io.blackpipe.fault.Failover;
import io.blackpipe.fault.Plural;
import io.blackpipe.fault.IdleTimeout;
import io.blackpipe.fault.Latency;
import io.blackpipe.fault.RuleException;
import io.blackpipe.fault.ScenarioException;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.pipe.MemberListener;
import io.blackpipe.pipe.OpenConnection;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.topology.Member;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonInvalidOperationException;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.json.JsonParseException;

/**
 * The control API's resources (under /api/v1): members, rules, scenario, connections, failover,
 * reset, stats, history. Every mutation is checked whole before it changes anything; PUT and DELETE are
 * idempotent.
 */
final class AdminApi {
    private final ProxyServer proxy;
    private final ControlLog log = new ControlLog();
    private final RuleResources rules;
    /** Names this proxy's run in its stats: a baseline saved from another run (the proxy started again) is told apart. */
    private final String run = UUID.randomUUID().toString();

    AdminApi(ProxyServer proxy) {
        this.proxy = proxy;
        this.rules = new RuleResources(proxy, log);
    }

    /**
     * @param rawPath      the request's path as sent (still percent-encoded), starting with /api/v1/: it is
     *                     split on '/' first and each segment decoded alone, so a rule id may hold an encoded '/'
     * @param followHistory starts the stream GET /history?follow=true answers
     * @param from          the client's address, which the log line of a change names
     * @return the answer, or null when the request became that stream
     */
    AdminResponse handle(HttpMethod method, String rawPath, Map<String, List<String>> query, String body, Runnable followHistory, String from) {
        List<String> parts;
        try {
            parts = PathSegments.decoded(rawPath.substring("/api/v1/".length()));
        } catch (IllegalArgumentException e) {
            return AdminResponse.error(HttpResponseStatus.BAD_REQUEST, "path " + PathSegments.asSent(rawPath) + ": " + e.getMessage());
        }
        AdminRoute route = route(parts, rawPath, query, body, followHistory, from);
        if (route == null) {
            return notFound(rawPath);
        }
        try {
            return route.answer(method, rawPath, query, body);
        } catch (RuleException e) {
            return AdminResponse.error(HttpResponseStatus.BAD_REQUEST, e.getMessage());
        } catch (JsonParseException | BsonInvalidOperationException e) {
            return AdminResponse.error(HttpResponseStatus.BAD_REQUEST, "malformed JSON body: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            return AdminResponse.error(HttpResponseStatus.BAD_REQUEST, e.getMessage());
        } catch (IllegalStateException e) {
            return AdminResponse.error(HttpResponseStatus.CONFLICT, e.getMessage());
        }
    }

    /**
     * Every resource of the API, a path under /api/v1 whose {placeholder} segments match any one segment; the
     * README's API table lists the same (ReadmeApiTruthTest). A path matches one only with as many segments:
     * anything more, or a subresource the API does not know, is a 404, never the shorter route it starts with.
     */
    static final List<String> RESOURCES = List.of("members", "members/{member}/outage", "members/{member}/blackhole",
            "members/{member}/latency", "members/{member}/bandwidth", "members/{member}/idleTimeout",
            "members/{member}/restart", "members/{member}/restore", "rules", "rules/{id}", "rules/{id}/fired", "scenario", "scenario/validate",
            "scenario/bundled", "scenario/bundled/{name}", "connections", "connections/reset", "failover", "reset", "stats", "history");

    /** The first of {@link #RESOURCES} that {@code parts} (decoded segments) match, or null for none. */
    static String resourceOf(List<String> parts) {
        for (String resource : RESOURCES) {
            String[] template = resource.split("/");
            boolean matches = template.length == parts.size();
            for (int i = 0; matches && i < template.length; i++) {
                matches = template[i].startsWith("{") || template[i].equals(parts.get(i));
            }
            if (matches) {
                return resource;
            }
        }
        return null;
    }

    /** The route at {@code parts}, or null for none (a 404). */
    AdminRoute route(List<String> parts, String rawPath, Map<String, List<String>> query, String body, Runnable followHistory, String from) {
        String resource = resourceOf(parts);
        if (resource == null) {
            return null;
        }
        String second = parts.size() > 1 ? parts.get(1) : null;
        String third = parts.size() > 2 ? parts.get(2) : null;
        return switch (resource) {
            case "members" -> AdminRoute.get(() -> AdminResponse.ok("members", members()));
            case "connections" -> AdminRoute.get(this::connections);
            case "members/{member}/outage", "members/{member}/blackhole" ->
                    AdminRoute.post(Set.of("duration"), () -> memberAction(second, third, query, from));
            case "members/{member}/latency" -> AdminRoute.post(Set.of("delay", "jitter", "direction", "duration"), () -> memberAction(second, third, query, from));
            case "members/{member}/bandwidth" -> AdminRoute.post(Set.of("rate", "direction", "duration"), () -> memberAction(second, third, query, from));
            case "members/{member}/idleTimeout" -> AdminRoute.post(Set.of("after", "then", "duration"), () -> memberAction(second, third, query, from));
            case "members/{member}/restart" -> AdminRoute.post(Set.of("quiesce", "down"), () -> memberAction(second, third, query, from));
            case "members/{member}/restore" -> AdminRoute.post(() -> memberAction(second, third, query, from));
            case "rules" -> new AdminRoute(List.of(HttpMethod.GET, HttpMethod.POST, HttpMethod.DELETE), Set.of(), Set.of(HttpMethod.POST),
                    method -> method.equals(HttpMethod.GET) ? rules.list() : method.equals(HttpMethod.POST) ? rules.add(body, from) : rules.clear(from));
            case "rules/{id}" -> new AdminRoute(List.of(HttpMethod.GET, HttpMethod.PUT, HttpMethod.DELETE), Set.of(), Set.of(HttpMethod.PUT),
                    method -> method.equals(HttpMethod.GET) ? rules.one(second, rawPath)
                            : method.equals(HttpMethod.PUT) ? rules.put(second, body, rawPath, from) : rules.remove(second, rawPath, from));
            case "rules/{id}/fired" -> AdminRoute.get(() -> rules.fired(second, rawPath));
            case "scenario" -> new AdminRoute(List.of(HttpMethod.GET, HttpMethod.POST, HttpMethod.DELETE), Set.of(), Set.of(HttpMethod.POST),
                    method -> method.equals(HttpMethod.GET) ? AdminResponse.ok(proxy.scenarios().status())
                            : method.equals(HttpMethod.POST) ? postScenario(body, false, from) : stopScenario(from));
            case "scenario/validate" -> AdminRoute.postWithBody(() -> postScenario(body, true, from));
            case "scenario/bundled" -> AdminRoute.get(this::bundledScenarios);
            case "scenario/bundled/{name}" -> AdminRoute.post(() -> bundledScenario(third, from));
            case "connections/reset" -> AdminRoute.post(Set.of("member"), () -> resetConnections(query, from));
            case "failover" -> AdminRoute.post(Set.of("election", "rollback"), () -> {
                Failover failover = MemberQuery.failover(query);
                long rolledBack = proxy.failover(failover);
                log.changed("failover asked: " + failover.describe() + (rolledBack == 0 ? "" : ": "
                        + Plural.of(rolledBack, "document") + " rolled back"), from);
                return AdminResponse.ok(new BsonDocument("ok", new BsonDouble(1)).append("rolledBack", new BsonInt64(rolledBack)));
            });
            case "reset" -> AdminRoute.post(() -> {
                try {
                    proxy.reset();
                } catch (RuntimeException e) { // part of it done (the rules removed, say): said, as a change was made
                    log.changed("reset failed part-way: " + e.getMessage(), from);
                    throw e;
                }
                log.changed("reset: scenario stopped, rules removed, members restored", from);
                // the proxy's clock now: GET /history?since= it shows what was recorded after the reset
                return AdminResponse.ok(new BsonDocument("ok", new BsonDouble(1)).append("at", new BsonString(Instant.now().toString())));
            });
            case "stats" -> AdminRoute.get(() -> AdminResponse.ok(StatsJson.of(proxy.registry(), run)));
            case "history" -> AdminRoute.get(Set.of("since", "follow"), () -> history(query, followHistory));
            default -> throw new IllegalStateException("resource " + resource + " has no route");
        };
    }

    /** GET /connections: the members' rows (as /members gives them, with their counts) and each open client connection. */
    private AdminResponse connections() {
        BsonArray connections = new BsonArray();
        for (OpenConnection open : OpenConnection.of(proxy)) {
            connections.add(new BsonDocument("id", new BsonInt64(open.id())).append("member", new BsonString(open.member()))
                    .append("client", new BsonString(open.client())).append("app", new BsonString(open.app()))
                    .append("openedAt", new BsonString(Instant.ofEpochMilli(open.openedAtMillis()).toString())));
        }
        return AdminResponse.ok(new BsonDocument("members", members()).append("connections", connections));
    }

    private BsonArray members() {
        BsonArray members = new BsonArray();
        for (Member member : proxy.members()) {
            MemberListener listener = proxy.listener(member.upstream());
            Latency latency = listener.latency();
            Bandwidth bandwidth = listener.bandwidth();
            IdleTimeout idleTimeout = listener.idleTimeout();
            members.add(new BsonDocument("upstream", new BsonString(member.upstream().toString()))
                    .append("advertised", new BsonString(member.advertised().toString()))
                    .append("role", new BsonString(proxy.memberState(member.upstream()).role().name().toLowerCase()))
                    .append("openConnections", new BsonInt32(listener.openConnections()))
                    .append("state", new BsonString(state(listener)))
                    .append("latencyMS", new BsonInt64(latency == null ? 0 : latency.delayMillis()))
                    .append("jitterMS", new BsonInt64(latency == null ? 0 : latency.jitterMillis()))
                    .append("latencyDirection", latency == null ? BsonNull.VALUE : new BsonString(latency.direction().label()))
                    .append("bandwidthBytesPerSecond", new BsonInt64(bandwidth == null ? 0 : bandwidth.bytesPerSecond()))
                    .append("bandwidthDirection", bandwidth == null ? BsonNull.VALUE : new BsonString(bandwidth.direction().label()))
                    .append("idleTimeoutMS", new BsonInt64(idleTimeout == null ? 0 : idleTimeout.afterMillis()))
                    .append("idleTimeoutThen", idleTimeout == null ? BsonNull.VALUE : new BsonString(idleTimeout.then().label())));
        }
        return members;
    }

    /** A member's state: up, outage, blackhole, or a restart's quiescing, then restarting (down). */
    private static String state(MemberListener listener) {
        if (listener.down()) {
            return listener.downBy().equals(DeploymentFaults.RESTART) ? "restarting" : "outage";
        }
        return listener.quiesce() != null ? "quiescing" : listener.blackholed() ? "blackhole" : "up";
    }

    /** POST /members/{member}/outage, /blackhole, /latency, /bandwidth, /idleTimeout, /restart (each with its {@link MemberQuery}), /restore. */
    private AdminResponse memberAction(String member, String action, Map<String, List<String>> query, String from) {
        if (!proxy.knowsMember(member)) {
            return AdminResponse.error(HttpResponseStatus.NOT_FOUND, proxy.noMember(member));
        }
        long millis = MemberQuery.durationMillis(query);
        switch (action) {
            case "outage" -> proxy.outage(member, millis);
            case "blackhole" -> proxy.blackhole(member, millis);
            case "latency" -> proxy.latency(member, MemberQuery.latency(query), millis);
            case "bandwidth" -> proxy.bandwidth(member, MemberQuery.bandwidth(query), millis);
            case "idleTimeout" -> proxy.idleTimeout(member, MemberQuery.idleTimeout(query), millis);
            case "restart" -> proxy.restart(member, MemberQuery.restart(query));
            default -> proxy.restore(member);
        }
        log.changed(action + " of member " + member + " asked" + (query.isEmpty() ? "" : " (" + asked(query) + ")"), from);
        return AdminResponse.done();
    }

    /** A request's query as it was asked: duration=5s, delay=200ms. */
    private static String asked(Map<String, List<String>> query) {
        List<String> pairs = new java.util.ArrayList<>();
        query.forEach((name, values) -> values.forEach(value -> pairs.add(name + "=" + value)));
        return String.join(", ", pairs);
    }

    /** POST /scenario (starts it) and /scenario/validate (checks it, starts nothing). */
    private AdminResponse postScenario(String body, boolean validate, String from) {
        try {
            if (validate) {
                var scenario = proxy.scenarioLoader().check(AdminHttp.SCENARIO_SOURCE, body);
                return AdminResponse.ok(new BsonDocument("valid", org.bson.BsonBoolean.TRUE)
                        .append("name", new BsonString(scenario.name())));
            }
            proxy.scenarios().start(loader -> loader.parse(AdminHttp.SCENARIO_SOURCE, body));
            BsonDocument status = proxy.scenarios().status();
            log.changed("scenario " + status.getString("name", new BsonString("")).getValue() + " started", from);
            return AdminResponse.ok(status);
        } catch (ScenarioException e) {
            return AdminResponse.error(HttpResponseStatus.BAD_REQUEST, e.getMessage());
        }
    }

    private AdminResponse stopScenario(String from) {
        proxy.scenarios().stop();
        log.changed("scenario stopped", from);
        return AdminResponse.ok(proxy.scenarios().status());
    }

    /** GET /scenario/bundled: the names POST /scenario/bundled/{name} takes, sorted. */
    private AdminResponse bundledScenarios() {
        BsonArray names = new BsonArray();
        BundledScenarios.names().forEach(name -> names.add(new BsonString(name)));
        return AdminResponse.ok("bundled", names);
    }

    /**
     * POST /scenario/bundled/{name}: starts a scenario shipped in the proxy's jar (fault-scripts/NAME.yaml), as
     * POST /scenario starts one sent whole; a 404 names the bundled ones when none is called {@code name}.
     */
    private AdminResponse bundledScenario(String name, String from) {
        try {
            BundledScenarios.text(name);
        } catch (IllegalArgumentException e) {
            return AdminResponse.error(HttpResponseStatus.NOT_FOUND, e.getMessage());
        }
        proxy.scenarios().start(loader -> BundledScenarios.load(loader, name)); // one that does not fit: a 400
        log.changed("bundled scenario " + name + " started", from);
        return AdminResponse.ok(proxy.scenarios().status());
    }

    /** POST /connections/reset?member=X resets all of a member's connections (default: all members). */
    private AdminResponse resetConnections(Map<String, List<String>> query, String from) {
        String member = query.containsKey("member") ? query.get("member").get(0) : "all";
        if (!proxy.knowsMember(member)) {
            throw new IllegalArgumentException("member: " + proxy.noMember(member)); // naming the members there are
        }
        // "primary" while a set elects: a 409, as the member actions and a failover answer it then, not "reset 0"
        int reset = proxy.resetConnectionsOfSome(member);
        log.changed("connections of " + (member.equals("all") ? "every member" : "member " + member) + " reset (" + Plural.of(reset, "connection") + ")", from);
        return AdminResponse.ok("reset", new BsonInt32(reset));
    }

    /**
     * GET /history, and ?since=INSTANT (ISO-8601, the proxy's clock): only the entries recorded from then on;
     * ?follow=true streams them (null: the stream answers).
     */
    private AdminResponse history(Map<String, List<String>> query, Runnable followHistory) {
        String follow = query.containsKey("follow") ? query.get("follow").get(0) : "false";
        if (!follow.equals("true") && !follow.equals("false")) {
            throw new IllegalArgumentException("follow: must be true or false, got '" + follow + "'");
        }
        if (follow.equals("true")) {
            if (query.containsKey("since")) { // refused rather than ignored: the stream starts from the beginning
                throw new IllegalArgumentException("since: not with follow=true, which streams every entry kept");
            }
            followHistory.run();
            return null;
        }
        List<HistoryEntry> entries = query.containsKey("since") ? historySince(query.get("since").get(0)) : proxy.history().recent();
        StringBuilder lines = new StringBuilder();
        for (HistoryEntry entry : entries) {
            lines.append(entry.toJson()).append('\n');
        }
        return AdminResponse.text(HttpResponseStatus.OK, "application/x-ndjson", lines.toString());
    }

    private List<HistoryEntry> historySince(String since) {
        Instant instant;
        try {
            instant = Instant.parse(since);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("since: '" + since + "' is not an instant such as 2025-01-31T12:00:00.000001Z");
        }
        // The history orders entries by System.nanoTime(): the instant becomes that clock's reading back then.
        long nowNanos = System.nanoTime();
        Duration ago = Duration.between(instant, Instant.now());
        if (ago.abs().compareTo(Duration.ofDays(365)) > 0) { // far off: all or nothing (and no overflow of nanoseconds)
            return ago.isNegative() ? List.of() : proxy.history().recent();
        }
        return proxy.history().recentSince(nowNanos - ago.toNanos());
    }

    static BsonDocument parseBody(String body) {
        if (body == null || body.isBlank()) {
            throw new IllegalArgumentException("the request needs a JSON body");
        }
        return JsonDocuments.parseOne(body);
    }

    /** @param what a path (/api/v1/...) or a thing ("rule x") */
    static AdminResponse notFound(String what) {
        return AdminResponse.error(HttpResponseStatus.NOT_FOUND, (what.startsWith("/") ? "no resource at " : "no ") + what);
    }
}
