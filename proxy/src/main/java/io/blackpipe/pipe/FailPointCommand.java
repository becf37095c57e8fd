package io.blackpipe.pipe;

import io.blackpipe.fault.ErrorReplies;
import io.blackpipe.fault.RuleException;
import io.blackpipe.fault.RuleParser;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;

/**
 * configureFailPoint sent through the proxy: taken as the proxy's own "failCommand" rule (the
 * server keeps one failCommand failpoint, so a new one replaces the old; mode "off" removes it),
 * answered with the server's reply shape. Test suites written for failCommand thereby run
 * against servers that have no test commands.
 */
final class FailPointCommand {
    static final String RULE_ID = "failCommand";

    private FailPointCommand() {
    }

    static BsonDocument apply(PipeContext context, BsonDocument command) {
        try {
            if (RuleParser.isOff(command)) {
                org.bson.BsonValue failPoint = command.get("configureFailPoint"); // any type may arrive: no getString
                if (failPoint == null || !failPoint.isString() || !"failCommand".equals(failPoint.asString().getValue())) {
                    throw new RuleException("configureFailPoint", "must be \"failCommand\"");
                }
                context.rules().remove(RULE_ID);
            } else {
                context.rules().put(context.ruleParser().parse(RULE_ID, command));
            }
            return new BsonDocument("count", new BsonInt32(0)).append("ok", new BsonDouble(1));
        } catch (RuleException e) {
            return ErrorReplies.badValue(e.getMessage());
        }
    }
}
