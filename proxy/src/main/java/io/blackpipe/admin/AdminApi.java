package io.blackpipe.admin;

import io.blackpipe.fault.Durations;
import io.blackpipe.fault.Rule;
import io.blackpipe.fault.RuleException;
import io.blackpipe.fault.RuleParser;
import io.blackpipe.fault.ScenarioException;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.pipe.MemberListener;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.topology.Member;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInvalidOperationException;
import org.bson.BsonString;
import org.bson.json.JsonParseException;

/**
 * The control API's resources (under /api/v1): members, rules, scenario, connections, stats,
 * history. Every mutation is checked whole before it changes anything; PUT and DELETE are
 * idempotent.
 */
final class AdminApi {
    private final ProxyServer proxy;

    AdminApi(ProxyServer proxy) {
        this.proxy = proxy;
    }

    AdminResponse handle(HttpMethod method, String path, Map<String, List<String>> query, String body) {
        String[] parts = path.substring("/api/v1/".length()).split("/");
        String resource = parts[0];
        String id = parts.length > 1 ? parts[1] : null;
        String action = parts.length > 2 ? parts[2] : null;
        try {
            switch (resource) {
                case "members": return id == null ? members(method) : memberAction(method, id, action, query);
                case "rules": return rules(method, id, body);
                case "scenario": return scenario(method, id, body);
                case "connections": return connections(method, id, query);
                case "failover": return post(method, () -> {
                    proxy.failover();
                    return AdminResponse.done();
                });
                case "stats": return get(method, () -> AdminResponse.ok(StatsJson.of(proxy.registry())));
                case "history": return get(method, this::history);
                default: return notFound(path);
            }
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

    private AdminResponse members(HttpMethod method) {
        return get(method, () -> {
            BsonArray members = new BsonArray();
            for (Member member : proxy.members()) {
                MemberListener listener = proxy.listener(member.upstream());
                members.add(new BsonDocument("upstream", new BsonString(member.upstream().toString()))
                        .append("advertised", new BsonString(member.advertised().toString()))
                        .append("role", new BsonString(proxy.memberState(member.upstream()).role().name().toLowerCase()))
                        .append("openConnections", new BsonInt32(listener.openConnections()))
                        .append("state", new BsonString(listener.down() ? "outage" : listener.blackholed() ? "blackhole" : "up")));
            }
            return AdminResponse.ok("members", members);
        });
    }

    /** POST /members/{member}/outage?duration=5s, /blackhole?duration=..., /restore. */
    private AdminResponse memberAction(HttpMethod method, String member, String action, Map<String, List<String>> query) {
        if (!proxy.knowsMember(member)) {
            return notFound("member " + member);
        }
        return post(method, () -> {
            long millis;
            try {
                millis = query.containsKey("duration") ? Durations.millis(query.get("duration").get(0)) : 0;
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("duration: " + e.getMessage(), e);
            }
            switch (action == null ? "" : action) {
                case "outage" -> proxy.outage(member, millis);
                case "blackhole" -> proxy.blackhole(member, millis);
                case "restore" -> proxy.restore(member);
                default -> throw new IllegalArgumentException("member action must be outage, blackhole or restore, got '" + action + "'");
            }
            return AdminResponse.done();
        });
    }

    private AdminResponse rules(HttpMethod method, String id, String body) {
        if (method.equals(HttpMethod.GET) && id == null) {
            BsonArray rules = new BsonArray();
            for (Rule rule : proxy.rules().rules()) {
                rules.add(new BsonDocument("id", new BsonString(rule.id())).append("rule", rule.source())
                        .append("mode", new BsonString(rule.mode().describe())).append("fault", new BsonString(rule.action().name())));
            }
            return AdminResponse.ok("rules", rules);
        }
        if (method.equals(HttpMethod.POST) && id == null) {
            BsonDocument document = parseBody(body);
            String ruleId = document.isString("id") ? document.getString("id").getValue() : UUID.randomUUID().toString();
            proxy.rules().put(parseRule(ruleId, document));
            return AdminResponse.json(HttpResponseStatus.CREATED, new BsonDocument("id", new BsonString(ruleId)));
        }
        if (method.equals(HttpMethod.PUT) && id != null) {
            proxy.rules().put(parseRule(id, parseBody(body)));
            return AdminResponse.ok("id", new BsonString(id));
        }
        if (method.equals(HttpMethod.DELETE)) {
            if (id == null) {
                proxy.rules().clear();
            } else if (!proxy.rules().remove(id)) {
                return notFound("rule " + id);
            }
            return AdminResponse.done();
        }
        return notAllowed(method, "/api/v1/rules" + (id == null ? "" : "/" + id));
    }

    private Rule parseRule(String id, BsonDocument document) {
        if (RuleParser.isOff(document)) {
            throw new RuleException("mode", "\"off\" removes a rule: DELETE /api/v1/rules/{id} instead");
        }
        return proxy.ruleParser().parse(id, document);
    }

    private AdminResponse scenario(HttpMethod method, String sub, String body) {
        if (method.equals(HttpMethod.GET)) {
            return AdminResponse.ok(proxy.scenarios().status());
        }
        if (method.equals(HttpMethod.DELETE)) {
            proxy.scenarios().stop();
            return AdminResponse.ok(proxy.scenarios().status());
        }
        if (method.equals(HttpMethod.POST)) {
            try {
                var scenario = proxy.scenarioLoader().parse("request body", body);
                if ("validate".equals(sub)) {
                    return AdminResponse.ok(new BsonDocument("valid", org.bson.BsonBoolean.TRUE)
                            .append("name", new BsonString(scenario.name())));
                }
                proxy.scenarios().start(scenario);
                return AdminResponse.ok(proxy.scenarios().status());
            } catch (ScenarioException e) {
                return AdminResponse.error(HttpResponseStatus.BAD_REQUEST, e.getMessage());
            }
        }
        return notAllowed(method, "/api/v1/scenario");
    }

    /** GET /connections; POST /connections/reset?member=X resets all of a member's connections. */
    private AdminResponse connections(HttpMethod method, String action, Map<String, List<String>> query) {
        if (action == null) {
            return members(method);
        }
        if (!action.equals("reset")) {
            return notFound("/api/v1/connections/" + action);
        }
        return post(method, () -> {
            String member = query.containsKey("member") ? query.get("member").get(0) : "all";
            if (!proxy.knowsMember(member)) {
                throw new IllegalArgumentException("member: no member '" + member + "'");
            }
            int reset = proxy.select(member).stream().mapToInt(MemberListener::resetConnections).sum();
            return AdminResponse.ok("reset", new BsonInt32(reset));
        });
    }

    private AdminResponse history() {
        StringBuilder lines = new StringBuilder();
        for (HistoryEntry entry : proxy.history().recent()) {
            lines.append(entry.toJson()).append('\n');
        }
        return AdminResponse.text(HttpResponseStatus.OK, "application/x-ndjson", lines.toString());
    }

    private static BsonDocument parseBody(String body) {
        if (body == null || body.isBlank()) {
            throw new IllegalArgumentException("the request needs a JSON body");
        }
        return BsonDocument.parse(body);
    }

    private static AdminResponse get(HttpMethod method, java.util.function.Supplier<AdminResponse> handler) {
        return method.equals(HttpMethod.GET) ? handler.get() : notAllowed(method, "this resource");
    }

    private static AdminResponse post(HttpMethod method, java.util.function.Supplier<AdminResponse> handler) {
        return method.equals(HttpMethod.POST) ? handler.get() : notAllowed(method, "this resource");
    }

    private static AdminResponse notFound(String what) {
        return AdminResponse.error(HttpResponseStatus.NOT_FOUND, "no " + what);
    }

    private static AdminResponse notAllowed(HttpMethod method, String what) {
        return AdminResponse.error(HttpResponseStatus.METHOD_NOT_ALLOWED, method + " is not allowed on " + what);
    }
}
