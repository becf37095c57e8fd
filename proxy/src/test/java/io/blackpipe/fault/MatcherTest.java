package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.FakeInterception.Facts;
import io.blackpipe.observe.Attempt;
import io.blackpipe.topology.MemberState;
import java.util.Set;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class MatcherTest {
    private static final MemberState PRIMARY = FakeInterception.primary(17);
    private static final MemberState SECONDARY = new MemberState(MemberState.Role.SECONDARY, 17, FakeInterception.PROCESS_ID, 1);
    private static final MemberState UNKNOWN = MemberState.UNKNOWN;
    /** The upstream address is the Attempt's member ("db1.example:27017"); this is the proxy's listener for it. */
    private static final String ADVERTISED = "127.0.0.1:40001";

    private static Matcher matcher(String appName, String namespace, String member, String attempt) {
        return new Matcher(Set.of("insert", "find"), appName, namespace, member, attempt);
    }

    private static Attempt insert() {
        return Facts.insert().database("app").collection("orders").attempt("shop", 1);
    }

    @Test
    void onlyTheNamedCommandsMatch() {
        Matcher any = matcher(null, null, null, null);
        assertTrue(any.matches(insert(), PRIMARY, ADVERTISED));
        assertTrue(any.matches(Facts.command("find").attempt("", 1), UNKNOWN, ADVERTISED));
        assertFalse(any.matches(Facts.command("update").attempt("shop", 1), PRIMARY, ADVERTISED));
        assertFalse(any.matches(Facts.command("Insert").attempt("shop", 1), PRIMARY, ADVERTISED), "names are case-sensitive");
    }

    @Test
    void appName() {
        assertTrue(matcher("shop", null, null, null).matches(insert(), PRIMARY, ADVERTISED));
        assertFalse(matcher("billing", null, null, null).matches(insert(), PRIMARY, ADVERTISED));
        assertFalse(matcher("shop", null, null, null).matches(Facts.insert().attempt("", 1), PRIMARY, ADVERTISED),
                "a connection without appName does not match a rule for one");
    }

    @Test
    void namespaceAsDatabase() {
        assertTrue(matcher(null, "app", null, null).matches(insert(), PRIMARY, ADVERTISED));
        assertFalse(matcher(null, "ap", null, null).matches(insert(), PRIMARY, ADVERTISED));
        assertFalse(matcher(null, "application", null, null).matches(insert(), PRIMARY, ADVERTISED));
        assertFalse(matcher(null, "other", null, null).matches(insert(), PRIMARY, ADVERTISED));
    }

    @Test
    void namespaceAsDatabaseAndCollection() {
        assertTrue(matcher(null, "app.orders", null, null).matches(insert(), PRIMARY, ADVERTISED));
        assertFalse(matcher(null, "app.order", null, null).matches(insert(), PRIMARY, ADVERTISED));
        assertFalse(matcher(null, "app.ordersx", null, null).matches(insert(), PRIMARY, ADVERTISED));
        assertFalse(matcher(null, "ap.porders", null, null).matches(insert(), PRIMARY, ADVERTISED));
        assertFalse(matcher(null, "other.orders", null, null).matches(insert(), PRIMARY, ADVERTISED));
        assertFalse(matcher(null, "app.orders", null, null).matches(Facts.insert().database("app").collection("orders.x")
                .attempt("", 1), PRIMARY, ADVERTISED));
        Attempt dotted = Facts.insert().database("app").collection("orders.archive").attempt("", 1);
        assertTrue(matcher(null, "app.orders.archive", null, null).matches(dotted, PRIMARY, ADVERTISED));
        assertTrue(matcher(null, "app", null, null).matches(dotted, PRIMARY, ADVERTISED));
    }

    @Test
    void memberByRole() {
        assertTrue(matcher(null, null, "primary", null).matches(insert(), PRIMARY, ADVERTISED));
        assertFalse(matcher(null, null, "primary", null).matches(insert(), SECONDARY, ADVERTISED));
        assertFalse(matcher(null, null, "primary", null).matches(insert(), UNKNOWN, ADVERTISED));
        assertTrue(matcher(null, null, "secondary", null).matches(insert(), SECONDARY, ADVERTISED));
        assertFalse(matcher(null, null, "secondary", null).matches(insert(), PRIMARY, ADVERTISED));
    }

    @Test
    void memberByUpstreamOrAdvertisedAddress() {
        assertTrue(matcher(null, null, "db1.example:27017", null).matches(insert(), SECONDARY, ADVERTISED));
        assertTrue(matcher(null, null, "DB1.example:27017", null).matches(insert(), SECONDARY, ADVERTISED), "host names ignore case");
        assertTrue(matcher(null, null, ADVERTISED, null).matches(insert(), SECONDARY, ADVERTISED), "the proxy's own address works too");
        assertFalse(matcher(null, null, "db2.example:27017", null).matches(insert(), PRIMARY, ADVERTISED));
        assertFalse(matcher(null, null, "db1.example:27018", null).matches(insert(), PRIMARY, ADVERTISED));
    }

    @Test
    void attemptFirstOrRetry() {
        Attempt first = Facts.insert().txnNumber(1).attempt("", 1);
        Attempt retry = Facts.insert().txnNumber(1).attempt("", 2);
        Attempt secondRetry = Facts.insert().txnNumber(1).attempt("", 3);
        assertTrue(matcher(null, null, null, "first").matches(first, PRIMARY, ADVERTISED));
        assertFalse(matcher(null, null, null, "first").matches(retry, PRIMARY, ADVERTISED));
        assertFalse(matcher(null, null, null, "retry").matches(first, PRIMARY, ADVERTISED));
        assertTrue(matcher(null, null, null, "retry").matches(retry, PRIMARY, ADVERTISED));
        assertTrue(matcher(null, null, null, "retry").matches(secondRetry, PRIMARY, ADVERTISED));
        assertTrue(matcher(null, null, null, null).matches(retry, PRIMARY, ADVERTISED));
    }

    @Test
    void everyConditionMustHold() {
        Matcher all = matcher("shop", "app.orders", "primary", "first");
        assertTrue(all.matches(insert(), PRIMARY, ADVERTISED));
        assertFalse(all.matches(insert(), SECONDARY, ADVERTISED));
        assertFalse(all.matches(Facts.insert().attempt("shop", 2), PRIMARY, ADVERTISED));
        assertFalse(all.matches(Facts.insert().attempt("other", 1), PRIMARY, ADVERTISED));
        assertFalse(all.matches(Facts.insert().collection("x").attempt("shop", 1), PRIMARY, ADVERTISED));
    }

    /** Each near miss differs from app.orders in one way only, so each check of the namespace must hold on its own. */
    @Test
    void aNamespaceMatchesOnlyWhenDatabaseDotAndCollectionAllLineUp() {
        assertFalse(matcher(null, "app.xorders", null, null).matches(insert(), PRIMARY, ADVERTISED), "longer only");
        assertFalse(matcher(null, "xyz.orders", null, null).matches(insert(), PRIMARY, ADVERTISED), "another database only");
        assertFalse(matcher(null, "app.ordexs", null, null).matches(insert(), PRIMARY, ADVERTISED), "another collection only");
        Attempt dotted = Facts.insert().database("app").collection("a.b").attempt("", 1);
        assertTrue(matcher(null, "app.a.b", null, null).matches(dotted, PRIMARY, ADVERTISED));
        assertFalse(matcher(null, "appxa.b", null, null).matches(dotted, PRIMARY, ADVERTISED),
                "database appxa, collection b: not app's a.b although the letters line up");
    }

    /** A command whose BSON does not decode gives no document: a rule that looks into it does not fire, and nothing throws. */
    @Test
    void aPatternMatchesNoCommandWithoutADocument() {
        CommandPattern pattern = CommandPattern.parse("data.commandMatches", BsonDocument.parse("{ordered: true}"));
        Matcher looking = new Matcher(Set.of("insert"), null, null, null, null, pattern);
        assertTrue(looking.matches(insert(), PRIMARY, ADVERTISED, () -> BsonDocument.parse("{insert: 'orders', ordered: true}")));
        assertFalse(looking.matches(insert(), PRIMARY, ADVERTISED, () -> null));
        assertFalse(looking.matches(insert(), PRIMARY, ADVERTISED), "nor when there is no command to look into");
    }
}
