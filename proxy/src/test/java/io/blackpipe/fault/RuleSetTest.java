package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.FakeInterception.Facts;
import io.blackpipe.fault.action.CloseConnection;
import io.blackpipe.fault.action.Hang;
import io.blackpipe.observe.Attempt;
import io.blackpipe.topology.MemberState;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class RuleSetTest {
    private static final MemberState PRIMARY = FakeInterception.primary(17);
    private final RuleSet rules = new RuleSet();
    private final RuleParser parser = new RuleParser(0);

    private Rule rule(String id, String mode, String data) {
        return parser.parse(id, BsonDocument.parse("{configureFailPoint: 'failCommand', mode: " + mode + ", data: " + data + "}"));
    }

    private RuleSet.Decision decide(String command) {
        return rules.decide(Facts.command(command).attempt("app", 1), PRIMARY, "127.0.0.1:40000");
    }

    private String firedId(String command) {
        RuleSet.Decision decision = decide(command);
        return decision == null ? null : decision.rule().id();
    }

    /** A mode that counts how often the rule set consulted it. */
    private static final class CountingMode extends Mode {
        final AtomicInteger consulted = new AtomicInteger();

        @Override
        public boolean fire() {
            consulted.incrementAndGet();
            return true;
        }

        @Override
        public boolean spent() {
            consulted.incrementAndGet();
            return false;
        }

        @Override
        public String describe() {
            return "counting";
        }
    }

    @Test
    void anEmptySetDecidesNothing() {
        assertNull(decide("insert"));
        assertTrue(rules.rules().isEmpty());
    }

    @Test
    void theFirstMatchingRuleInInsertionOrderWins() {
        rules.put(rule("a", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 1}"));
        rules.put(rule("b", "'alwaysOn'", "{failCommands: ['insert', 'find'], errorCode: 2}"));
        rules.put(rule("c", "'alwaysOn'", "{failCommands: ['find'], errorCode: 3}"));
        assertEquals("a", firedId("insert"));
        assertEquals("b", firedId("find"), "b was added before c");
        assertNull(firedId("update"));
        RuleSet.Decision decision = decide("insert");
        assertSame(decision.rule().action(), decision.action());
    }

    @Test
    void aRuleWhoseMatcherOrModeDeclinesLetsTheNextOneDecide() {
        rules.put(rule("other-app", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 1, appName: 'other'}"));
        rules.put(rule("skipping", "{skip: 1}", "{failCommands: ['insert'], errorCode: 2}"));
        rules.put(rule("fallback", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 3}"));
        assertEquals("fallback", firedId("insert"), "other-app does not match, skipping skips its first match");
        assertEquals("skipping", firedId("insert"));
    }

    @Test
    void aTimesRuleStopsFiringAfterNAndTheNextRuleTakesOver() {
        rules.put(rule("twice", "{times: 2}", "{failCommands: ['insert'], errorCode: 1}"));
        rules.put(rule("always", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 2}"));
        assertEquals("twice", firedId("insert"));
        assertEquals("twice", firedId("insert"));
        assertEquals("always", firedId("insert"));
        assertEquals("always", firedId("insert"));
        assertTrue(rules.rules().get(0).mode().spent());
    }

    @Test
    void aTimesRuleIsNotConsumedByCommandsItDoesNotMatch() {
        rules.put(rule("once", "{times: 1}", "{failCommands: ['insert'], errorCode: 1, namespace: 'app.orders'}"));
        assertNull(rules.decide(Facts.insert().collection("other").attempt("", 1), PRIMARY, "x:1"));
        assertNull(firedId("find"));
        assertEquals("once", firedId("insert"));
        assertNull(firedId("insert"));
    }

    @Test
    void aCommandNoRuleNamesNeverReachesMatching() {
        CountingMode mode = new CountingMode();
        rules.put(new Rule("counted", new Matcher(Set.of("insert"), null, null, null, null), mode, new Hang(), new BsonDocument()));
        for (int i = 0; i < 100; i++) {
            assertNull(decide("find"));
            assertNull(decide("hello"));
        }
        assertEquals(0, mode.consulted.get(), "the command-name index answers before any rule is looked at");
        assertEquals("counted", firedId("insert"));
        assertEquals(2, mode.consulted.get());
    }

    @Test
    void putWithTheSameIdReplacesTheRule() {
        rules.put(rule("x", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 1}"));
        rules.put(rule("y", "'alwaysOn'", "{failCommands: ['update'], errorCode: 2}"));
        rules.put(rule("x", "'alwaysOn'", "{failCommands: ['find'], closeConnection: true}"));
        assertEquals(2, rules.rules().size());
        assertEquals(List.of("x", "y"), rules.rules().stream().map(Rule::id).toList(), "a replaced rule keeps its place");
        assertNull(decide("insert"), "the old version's command no longer fires");
        assertTrue(decide("find").action() instanceof CloseConnection);
    }

    @Test
    void aRuleReplacedFromTheMiddleKeepsItsPlaceThere() {
        rules.put(rule("a", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 1}"));
        rules.put(rule("b", "'alwaysOn'", "{failCommands: ['find'], errorCode: 2}"));
        rules.put(rule("c", "'alwaysOn'", "{failCommands: ['find'], errorCode: 3}"));
        rules.put(rule("b", "'alwaysOn'", "{failCommands: ['find'], errorCode: 4}"));
        assertEquals(List.of("a", "b", "c"), rules.rules().stream().map(Rule::id).toList());
        assertEquals("a", firedId("insert"), "the first rule is not the one replaced");
        assertEquals("b", firedId("find"), "b still comes before c");
    }

    @Test
    void putAllReplacesSameIdsInPlaceAndAppendsNewOnes() {
        rules.put(rule("a", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 1}"));
        rules.put(rule("b", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 2}"));
        rules.putAll(List.of(rule("c", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 3}"),
                rule("a", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 4}")));
        assertEquals(List.of("a", "b", "c"), rules.rules().stream().map(Rule::id).toList());
        assertEquals("a", firedId("insert"), "the replaced rule still comes first");

        Rule later = rule("d", "'alwaysOn'", "{failCommands: ['find'], errorCode: 6}");
        rules.putAll(List.of(rule("d", "'alwaysOn'", "{failCommands: ['find'], errorCode: 5}"), later));
        assertEquals(List.of("a", "b", "c", "d"), rules.rules().stream().map(Rule::id).toList(), "one id twice in a batch: one rule");
        assertSame(later, rules.rules().get(3), "the later one, as putting them one by one leaves it");
    }

    @Test
    void removeReplaceAllAndClear() {
        rules.put(rule("x", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 1}"));
        rules.put(rule("y", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 2}"));
        assertTrue(rules.remove("x"));
        assertFalse(rules.remove("x"));
        assertEquals("y", firedId("insert"));
        rules.replaceAll(List.of(rule("z", "'alwaysOn'", "{failCommands: ['find'], errorCode: 3}")));
        assertNull(firedId("insert"));
        assertEquals("z", firedId("find"));
        assertTrue(rules.removeIf(r -> r.id().startsWith("z")));
        assertNull(firedId("find"));
        rules.put(rule("w", "'alwaysOn'", "{failCommands: ['find'], errorCode: 3}"));
        rules.clear();
        assertTrue(rules.rules().isEmpty());
        assertNull(firedId("find"));
    }

    @Test
    void theListingIsASnapshot() {
        rules.put(rule("x", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 1}"));
        List<Rule> before = rules.rules();
        rules.put(rule("y", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 2}"));
        assertEquals(1, before.size());
        assertEquals(2, rules.rules().size());
    }

    @Test
    void firedCountsEachIdsFaultsAsTheFailpointCountDoesUntilForgotten() {
        rules.put(rule("twice", "{times: 2}", "{failCommands: ['insert'], errorCode: 1}"));
        rules.put(rule("find", "'alwaysOn'", "{failCommands: ['find'], errorCode: 2}"));
        decide("insert");
        decide("insert");
        decide("insert"); // spent: not fired
        decide("find");
        decide("update"); // no rule
        assertEquals(2, rules.fired("twice"));
        assertEquals(1, rules.fired("find"));
        assertEquals(0, rules.fired("never-added"));
        rules.put(rule("find", "'alwaysOn'", "{failCommands: ['find'], errorCode: 3}"));
        decide("find");
        assertEquals(2, rules.fired("find"), "replacing a rule keeps its id's count, as the server's failpoint count");
        rules.remove("twice");
        assertEquals(2, rules.fired("twice"), "and removing it too");
        rules.forgetFired();
        assertEquals(0, rules.fired("twice"));
        assertEquals(0, rules.fired("find"));
        decide("find");
        assertEquals(1, rules.fired("find"), "counted from 0 again");
    }

    /**
     * A chaos controller that gives every rule a fresh id (PUT, one ping, DELETE, over and over) kept every id's count
     * for as long as the proxy ran: 20,000 of them held 8 MB in a soak test. Past {@link RuleSet#MOST_IDS_COUNTED}, the
     * counts of ids no rule in force has are forgotten, the first counted first; a rule in force keeps its count.
     */
    @Test
    void theCountsOfRulesGoneAreForgottenPastTheMostKeptTheOldestFirst() {
        rules.put(rule("kept", "'alwaysOn'", "{failCommands: ['find'], errorCode: 2}"));
        decide("find");
        int churned = RuleSet.MOST_IDS_COUNTED + 50;
        for (int i = 0; i < churned; i++) {
            rules.put(rule("fresh-" + i, "{times: 1}", "{failCommands: ['insert'], errorCode: 1}"));
            decide("insert");
            rules.remove("fresh-" + i);
        }
        assertEquals(1, rules.fired("kept"), "a rule in force keeps its count, however old");
        assertEquals(0, rules.fired("fresh-0"), "the first counted of the rules gone is forgotten");
        assertEquals(0, rules.fired("fresh-50"));
        assertEquals(1, rules.fired("fresh-51"));
        assertEquals(1, rules.fired("fresh-" + (churned - 1)), "the last counted is kept");
        long kept = java.util.stream.IntStream.range(0, churned).filter(i -> rules.fired("fresh-" + i) == 1).count();
        assertEquals(RuleSet.MOST_IDS_COUNTED - 1, kept, "with the rule in force, the most kept");
    }

    @Test
    void aRuleForARoleSeesTheStateOfTheMemberTheCommandGoesTo() {
        rules.put(rule("on-primary", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 1, member: 'primary'}"));
        rules.put(rule("on-secondary", "'alwaysOn'", "{failCommands: ['find'], errorCode: 2, member: 'secondary'}"));
        MemberState secondary = new MemberState(MemberState.Role.SECONDARY, 17, FakeInterception.PROCESS_ID, 7);
        Attempt insert = Facts.command("insert").attempt("app", 1);
        Attempt find = Facts.command("find").attempt("app", 1);
        assertEquals("on-primary", rules.decide(insert, PRIMARY, "127.0.0.1:40000").rule().id());
        assertNull(rules.decide(insert, secondary, "127.0.0.1:40001"));
        assertEquals("on-secondary", rules.decide(find, secondary, "127.0.0.1:40001").rule().id());
        assertNull(rules.decide(find, PRIMARY, "127.0.0.1:40000"));
    }

    @Test
    void retryOnlyRulesSeeOnlyRetries() {
        rules.put(rule("retry", "'alwaysOn'", "{failCommands: ['insert'], errorCode: 1, attempt: 'retry'}"));
        Attempt first = Facts.insert().txnNumber(1).attempt("", 1);
        Attempt retry = Facts.insert().txnNumber(1).attempt("", 2);
        assertNull(rules.decide(first, PRIMARY, "x:1"));
        assertEquals("retry", rules.decide(retry, PRIMARY, "x:1").rule().id());
    }
    @Test
    void aRuleOnAllCommandsTakesItsPlaceInTheOrderAmongNamedRules() {
        rules.put(rule("named-before", "{times: 1}", "{failCommands: ['insert'], errorCode: 2}"));
        rules.put(rule("all", "{times: 2}", "{failAllCommands: true, errorCode: 13}"));
        rules.put(rule("named-after", "'alwaysOn'", "{failCommands: ['insert', 'find'], errorCode: 2}"));
        assertEquals("named-before", firedId("insert"));
        assertEquals("all", firedId("insert"));
        assertEquals("all", firedId("ping"), "a command no rule names");
        assertEquals("named-after", firedId("insert"), "the rule on all commands is spent");
        assertNull(firedId("ping"));
    }

    @Test
    void aRuleOnAllCommandsReachesHellosUnlessItIsAFateOfTheReply() {
        rules.put(rule("delay", "'alwaysOn'", "{failAllCommands: true, delayReplyMS: 5}"));
        assertEquals("delay", firedId("ping"));
        assertNull(firedId("hello"), "the proxy rewrites hello replies: no reply fate there");
        assertNull(firedId("isMaster"));
        rules.put(rule("close", "'alwaysOn'", "{failAllCommands: true, closeConnection: true}"));
        assertEquals("close", firedId("hello"), "as the server's failAllCommands, hellos too");
    }

    @Test
    void aWriteConcernErrorOnAllCommandsReachesOnlyThoseTakingAWriteConcern() {
        rules.put(rule("wce", "'alwaysOn'", "{failAllCommands: true, writeConcernError: {code: 64}}"));
        assertEquals("wce", firedId("insert"));
        assertEquals("wce", firedId("commitTransaction"));
        assertNull(firedId("find"));
        assertNull(firedId("hello"));
    }
}
