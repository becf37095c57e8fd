package io.blackpipe;

import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;

/** Where a {@link FailRule} under test adds its rule: each document is kept, and named rule-1, rule-2, ... */
final class RecordedRules implements FailRule.Target {
    final List<BsonDocument> added = new ArrayList<>();

    @Override
    public String add(String id, BsonDocument failCommand) {
        added.add(failCommand);
        return "rule-" + added.size();
    }

    FailRule fail(String... commands) {
        return new FailRule(this, commands);
    }
}
