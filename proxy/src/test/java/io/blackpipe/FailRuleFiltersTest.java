package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * A filter set twice, or one that could never match, is refused as a mode set twice is: never a silent replacement;
 * and a builder adds one rule.
 */
class FailRuleFiltersTest {
    private final RecordedRules rules = new RecordedRules();
    private final List<BsonDocument> added = rules.added;

    private FailRule fail(String... commands) {
        return rules.fail(commands);
    }

    @Test
    void firstAttemptsThenRetriesIsRefusedNotTurnedIntoARuleOnRetriesOnly() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> fail("insert").firstAttempts().retries());
        assertEquals("retries(): this rule's attempt is already 'first'; a rule has one (a second rule can take 'retry')",
                e.getMessage());
        assertEquals(List.of(), added);
    }

    @Test
    void aSecondMemberAppOrNamespaceIsRefusedNamingTheFirst() {
        assertEquals("onMember(): this rule's member is already 'primary'; a rule has one (a second rule can take 'secondary')",
                assertThrows(IllegalStateException.class, () -> fail("find").onMember("primary").onMember("secondary")).getMessage());
        assertThrows(IllegalStateException.class, () -> fail("find").forApp("a").forApp("b"));
        assertThrows(IllegalStateException.class, () -> fail("find").onNamespace("shop").onNamespace("shop.orders"));
    }

    @Test
    void anEmptyNamespaceIsRefusedAsTheCliRefusesIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> fail("insert").onNamespace(""));
        assertEquals("onNamespace(): must not be empty: a rule on namespace '' would never fire"
                + " (give \"db.collection\" or \"db\", or leave it out for every namespace)", e.getMessage());
    }

    @Test
    void eachFilterOnceStillMakesOneRuleWithAllOfThem() {
        fail("insert").onMember("primary").forApp("app").onNamespace("shop.orders").retries().errorCode(2);
        BsonDocument data = added.get(0).getDocument("data");
        assertEquals("primary", data.getString("member").getValue());
        assertEquals("app", data.getString("appName").getValue());
        assertEquals("shop.orders", data.getString("namespace").getValue());
        assertEquals("retry", data.getString("attempt").getValue());
    }

    @Test
    void aBuilderAddsOneRuleAndIsRefusedAfterwardsRatherThanAddingAResetThatCallsItselfAnError() {
        FailRule rule = fail("insert").times(1);
        assertEquals("rule-1", rule.with(Fault.RESET));
        assertEquals("error(): this FailRule already added rule 'rule-1'; start another with fail(...) or failAll()",
                assertThrows(IllegalStateException.class, () -> rule.error("NotWritablePrimary")).getMessage());
        assertThrows(IllegalStateException.class, () -> rule.onMember("primary"));
        assertEquals("skip(1): this FailRule already added rule 'rule-1'; start another with fail(...) or failAll()",
                assertThrows(IllegalStateException.class, () -> rule.skip(1)).getMessage(), "a mode's call named once, not skip(1)()");
        assertEquals(1, added.size(), "only the first rule was added");
    }

    /** A terminal call that was refused leaves nothing of its action behind: the next one's rule is its own alone. */
    @Test
    void aRefusedActionLeavesNothingForTheNextOneToCarry() {
        FailRule rule = fail("insert").times(1).onNamespace("shop");
        assertThrows(IllegalArgumentException.class, () -> rule.error("NotWritablePrimary", ""));
        assertThrows(IllegalArgumentException.class, () -> rule.delay(java.time.Duration.ofMillis(5), java.time.Duration.ofNanos(5)));
        assertEquals(List.of(), added, "nothing was added");
        assertEquals("rule-1", rule.with(Fault.RESET));
        assertEquals(BsonDocument.parse("{failCommands: ['insert'], namespace: 'shop', resetConnection: true}"),
                added.get(0).getDocument("data"));
    }

    /** The same when the proxy refuses the rule (a member it does not front): the builder can try another action. */
    @Test
    void anActionTheProxyRefusedLeavesNothingBehindEither() {
        FailRule.Target refusesErrors = (id, failCommand) -> {
            if (failCommand.getDocument("data").containsKey("errorCode")) {
                throw new IllegalArgumentException("refused");
            }
            return rules.add(id, failCommand);
        };
        FailRule rule = new FailRule(refusesErrors, "find");
        assertThrows(IllegalArgumentException.class, () -> rule.errorCode(91));
        rule.delay(java.time.Duration.ofMillis(5));
        assertEquals(BsonDocument.parse("{failCommands: ['find'], delayReplyMS: 5}"), added.get(0).getDocument("data"));
    }
}
