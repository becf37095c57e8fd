package io.blackpipe;

import io.blackpipe.fault.RuleException;
import io.blackpipe.fault.RuleParser;
import io.blackpipe.pipe.ProxyServer;
import org.bson.BsonDocument;
import org.bson.BsonString;

/**
 * How {@link BlackPipe} adds a rule: refused as the admin API refuses it (an {@link IllegalArgumentException} naming the
 * field), given the next free "rule-N" id when it names none, and put in force at once.
 */
final class BlackPipeRules {
    private final ProxyServer proxy;
    private final GeneratedRuleIds generatedIds = new GeneratedRuleIds();

    BlackPipeRules(ProxyServer proxy) {
        this.proxy = proxy;
    }

    /** Adds (or replaces) the rule {@code id}, or a new one when {@code id} is null; returns its id. */
    String add(String id, BsonDocument document) {
        if (RuleParser.isOff(document)) {
            throw new IllegalArgumentException("mode: \"off\" removes a rule; call removeRule(id) instead");
        }
        String given = id != null ? id : generatedIds.next(proxy.rules());
        boolean added = false;
        try {
            Arguments.sameId(given, document);
            document.put("id", new BsonString(given));
            proxy.rules().put(proxy.ruleParser().parse(given, document));
            added = true;
        } catch (RuleException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        } finally {
            if (!added && id == null) { // refused: the next rule gets the id
                generatedIds.unused(given);
            }
        }
        return given;
    }

    /** The next rule added without an id gets the first free rule-N again. */
    void startIdsOver() {
        generatedIds.startOver();
    }
}
