package io.blackpipe.admin;

import io.blackpipe.fault.CommandSpelling;
import io.blackpipe.fault.JsonDocuments;
import io.blackpipe.fault.Plural;
import io.blackpipe.fault.Rule;
import io.blackpipe.fault.RuleException;
import io.blackpipe.fault.RuleParser;
import io.blackpipe.pipe.ProxyServer;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.List;
import java.util.UUID;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;

/** The control API's rules: GET, POST and DELETE /rules, GET, PUT and DELETE /rules/{id}, GET /rules/{id}/fired. Each change is logged. */
final class RuleResources {
    private final ProxyServer proxy;
    private final ControlLog log;

    RuleResources(ProxyServer proxy, ControlLog log) {
        this.proxy = proxy;
        this.log = log;
    }

    AdminResponse list() {
        BsonArray rules = new BsonArray();
        proxy.rules().rules().forEach(rule -> rules.add(described(rule)));
        return AdminResponse.ok("rules", rules);
    }

    /** GET /rules/{id}: the rule as GET /rules lists it, or a 404. */
    AdminResponse one(String id, String rawPath) {
        return id.isEmpty() ? AdminApi.notFound("rule with an empty id at " + rawPath) : proxy.rules().rules().stream()
                .filter(rule -> rule.id().equals(id)).findFirst().map(rule -> AdminResponse.ok(described(rule)))
                .orElseGet(() -> AdminApi.notFound("rule " + id));
    }

    private BsonDocument described(Rule rule) {
        return new BsonDocument("id", new BsonString(rule.id())).append("rule", JsonDocuments.longsSpelledOut(rule.document()))
                .append("mode", new BsonString(rule.mode().describe())).append("fault", new BsonString(rule.action().name()))
                .append("fired", new BsonInt64(proxy.rules().fired(rule.id())));
    }

    AdminResponse add(String body, String from) {
        BsonDocument document = AdminApi.parseBody(body);
        String ruleId = document.isString("id") ? document.getString("id").getValue() : UUID.randomUUID().toString();
        Rule rule = parse(ruleId, document);
        proxy.rules().put(rule);
        log.changed("rule " + ruleId + " set: " + rule.summary(), from);
        return AdminResponse.json(HttpResponseStatus.CREATED, withNotes(new BsonDocument("id", new BsonString(ruleId)), document));
    }

    AdminResponse clear(String from) {
        int had = proxy.rules().rules().size();
        proxy.rules().clear();
        log.changed("every rule removed (" + Plural.of(had, "rule") + ")", from);
        return AdminResponse.done();
    }

    AdminResponse put(String id, String body, String rawPath, String from) {
        if (id.isEmpty()) {
            return emptyRuleId(rawPath);
        }
        BsonDocument document = AdminApi.parseBody(body);
        if (document.isString("id") && !document.getString("id").getValue().equals(id)) {
            throw new RuleException("id", "'" + document.getString("id").getValue() + "' differs from '" + id
                    + "' in the path; leave it out or make them the same");
        }
        Rule rule = parse(id, document);
        proxy.rules().put(rule);
        log.changed("rule " + id + " set: " + rule.summary(), from);
        return AdminResponse.ok(withNotes(new BsonDocument("id", new BsonString(id)), document));
    }

    /** The answer to a rule taken, with a note for each command name that looks misspelt, as `fault add` prints them. */
    private static BsonDocument withNotes(BsonDocument answer, BsonDocument rule) {
        List<String> notes = CommandSpelling.notes(rule);
        if (!notes.isEmpty()) {
            BsonArray said = new BsonArray();
            notes.forEach(note -> said.add(new BsonString("data.failCommands: " + note)));
            answer.append("notes", said);
        }
        return answer;
    }

    AdminResponse remove(String id, String rawPath, String from) {
        if (id.isEmpty()) {
            return emptyRuleId(rawPath);
        }
        if (!proxy.rules().remove(id)) {
            return AdminApi.notFound("rule " + id);
        }
        log.changed("rule " + id + " removed", from);
        return AdminResponse.done();
    }

    /** e.g. `DELETE /api/v1/rules/$ID` with ID unset: it must not read as DELETE /api/v1/rules, which clears all. */
    private static AdminResponse emptyRuleId(String rawPath) {
        return AdminResponse.error(HttpResponseStatus.NOT_FOUND, "no rule with an empty id at " + rawPath
                + " (DELETE /api/v1/rules, without the trailing slash, removes every rule)");
    }

    /**
     * GET /rules/{id}/fired: how many commands the rule {@code id} has faulted, 0 for an id never seen. As the
     * server's failpoint count, it outlives the rule's replacement and removal (a rule of a stopped scenario too).
     */
    AdminResponse fired(String id, String rawPath) {
        return id.isEmpty() ? AdminApi.notFound("rule with an empty id at " + rawPath)
                : AdminResponse.ok(new BsonDocument("id", new BsonString(id)).append("fired", new BsonInt64(proxy.rules().fired(id))));
    }

    private Rule parse(String id, BsonDocument document) {
        if (RuleParser.isOff(document)) {
            throw new RuleException("mode", "\"off\" removes a rule: DELETE /api/v1/rules/{id} instead");
        }
        return proxy.ruleParser().parse(id, document);
    }
}
