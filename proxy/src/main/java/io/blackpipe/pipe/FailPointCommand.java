package io.blackpipe.pipe;

import io.blackpipe.fault.ErrorReplies;
import io.blackpipe.fault.Rule;
import io.blackpipe.fault.RuleException;
import io.blackpipe.fault.RuleParser;
import io.blackpipe.observe.Printable;
import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpMsg;
import io.netty.buffer.ByteBuf;
import java.util.Set;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * configureFailPoint and waitForFailPoint sent through the proxy. configureFailPoint becomes the
 * proxy's own rule "failCommand@member" for the member it was sent to, as a failpoint is a server's own
 * (each server keeps one failCommand failpoint, so a new one replaces the old there; mode "off" removes
 * it): one set on the primary fails nothing its secondaries (or the other mongoses) run, their hellos do
 * not spend its times, and one set on a secondary leaves the primary's in place. Both answer as the
 * server does, with the count of commands that member's failpoint has failed so far. Test suites written
 * for failCommand thereby run against servers that have no test commands.
 */
final class FailPointCommand {
    static final String FAIL_POINT = "failCommand";
    static final String CONFIGURE = "configureFailPoint";
    static final String WAIT = "waitForFailPoint";
    /** How often a waitForFailPoint looks at the count again (the server sleeps between looks too). */
    private static final long WAIT_POLL_MILLIS = 5;
    private static final int UNAUTHORIZED = 13;
    private static final int TYPE_MISMATCH = 14;
    private static final int MAX_TIME_MS_EXPIRED = 50;
    /** The server's code for a required field left out of a command. */
    private static final int MISSING_REQUIRED_FIELD = 40414;
    /**
     * The generic arguments a driver adds to any command (the server's generic_argument.idl): mongod takes them on
     * configureFailPoint too, so a Stable API client (apiVersion on every command) can set the failpoint. They are
     * not the rule: the rule kept is the failpoint alone.
     */
    private static final Set<String> GENERIC_ARGUMENTS = Set.of("$db", "lsid", "$clusterTime", "$readPreference",
            "apiVersion", "apiStrict", "apiDeprecationErrors", "maxTimeMS", "comment");

    private FailPointCommand() {
    }

    /**
     * Whether the proxy answers the command in {@code frame} itself rather than the member: a configureFailPoint or
     * waitForFailPoint of failCommand, the failpoint it keeps. One naming another failpoint
     * (failGetMoreAfterCursorCheckout, ...) is the server's own, which only the server can do: it goes on to the
     * member, which runs it or refuses it (one without test commands) as it would without a proxy.
     */
    static boolean answeredByTheProxy(ByteBuf frame, OpMsg msg, String commandName, PipeContext context) {
        if (context.forwardFailPoints() || !(commandName.equals(CONFIGURE) || commandName.equals(WAIT))) {
            return false;
        }
        BsonValue failPoint = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd()).get(commandName); // rare: decoded whole
        return failPoint == null || !failPoint.isString() || FAIL_POINT.equals(failPoint.asString().getValue()); // not a name: refused here
    }

    /**
     * Answers the configureFailPoint or waitForFailPoint in {@code frame} (released here) in its turn, on
     * the connection's event loop: at once; a wait once the count is reached or its maxTimeMS has passed
     * (looked at every few ms); a configure that meets a scenario being read once it is read. The loop is
     * never blocked. Sent with moreToCome it takes effect unanswered, as on mongod.
     */
    static void answer(Exchange exchange, ByteBuf frame, OpMsg msg, CommandFacts facts) {
        BsonDocument command = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
        frame.release();
        ClientConnection connection = exchange.connection();
        PipeContext context = exchange.context();
        WaitState wait = new WaitState();
        answer(context, connection, exchange.member().advertised().toString(), facts.name(), command, reply -> {
            if (!facts.moreToCome()) {
                exchange.answerInTurn(Messages.opMsg(connection.alloc(), context.nextRequestId(), facts.requestId(), 0, reply));
            }
            wait.answered = true;
            if (wait.holding) {
                exchange.requests().endOpenHold(); // from the wait's own task: never inside another resume
            }
        });
        if (!wait.answered) { // a wait blocks the connection, as on mongod: nothing after it goes first
            wait.holding = true;
            exchange.requests().holdOpenEnded();
        }
    }

    /**
     * Whether a command was answered at once (then nothing was held: answering inside a resume of the
     * queue must not resume it again) or holds its connection's requests until its answer.
     */
    private static final class WaitState {
        boolean answered;
        boolean holding;
    }

    private static void answer(PipeContext context, ClientConnection connection, String member, String commandName, BsonDocument command,
                               Consumer<BsonDocument> answer) {
        if (!"admin".equals(command.isString("$db") ? command.getString("$db").getValue() : null)) {
            // adminOnly on the server too: refused before anything is read of it
            answer.accept(ErrorReplies.commandError(UNAUTHORIZED, commandName + " may only be run against the admin database."));
            return;
        }
        BsonDocument apiRefusal = ApiParameters.refusal(command, commandName);
        if (apiRefusal != null) {
            answer.accept(apiRefusal);
            return;
        }
        if (commandName.equals(CONFIGURE)) {
            configure(context, connection, command, member, answer);
            return;
        }
        BsonDocument refused = checkWait(command);
        if (refused != null) {
            answer.accept(refused);
            return;
        }
        long target = ServerNumbers.safeNumberLong(command.get("timesEntered")); // negative: reached already, as on the server
        long maxTimeMillis = ServerNumbers.safeNumberLong(command.get("maxTimeMS")); // 0 to 2^31-1: checked above
        long deadline = maxTimeMillis > 0 ? System.nanoTime() + maxTimeMillis * 1_000_000 : Long.MAX_VALUE; // 0: no limit
        Runnable look = new Runnable() {
            @Override
            public void run() {
                if (!connection.isOpen()) {
                    // the client left (or the proxy closed its connection): as the server kills the operation
                    // of a client that disconnects, the wait ends here, unanswered, and is not looked at again
                    return;
                }
                if (context.rules().fired(ruleId(member)) >= target) {
                    answer.accept(new BsonDocument("ok", new BsonDouble(1)));
                } else if (System.nanoTime() >= deadline) {
                    answer.accept(ErrorReplies.commandError(MAX_TIME_MS_EXPIRED, "operation exceeded time limit"));
                } else {
                    connection.schedule(WAIT_POLL_MILLIS, this); // run at once when the client leaves: see above
                }
            }
        };
        look.run();
    }

    /**
     * Sets the failpoint as {@code member} keeps it: the rule applies there only, unless its data names a member itself.
     * While another thread holds the rule parser (reading a scenario of up to 1 MiB takes a few hundred ms) the rule is
     * parsed on a thread of its own and answered in turn after, as the connection's next requests wait for it; the
     * event loop goes on with its other connections.
     */
    private static void configure(PipeContext context, ClientConnection connection, BsonDocument command, String member,
                                  Consumer<BsonDocument> answer) {
        BsonDocument rule;
        Rule parsed;
        OpenConnection from = connection.describe(); // here, on its event loop: the rule may be put on a thread of its own
        String by = ", by configureFailPoint from client " + from.client() + " (connection " + from.id() + ")";
        try {
            if (RuleParser.isOff(command)) {
                answer.accept(turnOff(context, command, member, by));
                return;
            }
            rule = ruleOf(command, member);
            parsed = context.ruleParser().parseUnlessBusy(ruleId(member), rule);
        } catch (RuleException e) {
            answer.accept(ErrorReplies.badValue(e.getMessage()));
            return;
        }
        if (parsed != null) {
            answer.accept(put(context, parsed, member, by));
            return;
        }
        Thread parsing = new Thread(() -> {
            BsonDocument reply;
            try {
                reply = put(context, context.ruleParser().parse(ruleId(member), rule), member, by);
            } catch (RuleException e) {
                reply = ErrorReplies.badValue(e.getMessage());
            }
            BsonDocument answered = reply;
            connection.runOnItsEventLoop(() -> {
                if (connection.isOpen()) { // a client gone by then is answered nothing; its rule is set, as on mongod
                    answer.accept(answered);
                }
            });
        }, "blackpipe-configureFailPoint");
        parsing.setDaemon(true);
        parsing.start();
    }

    /** The rule a configureFailPoint sets: the command less the generic arguments, kept to {@code member} unless it names one. */
    private static BsonDocument ruleOf(BsonDocument command, String member) {
        BsonDocument rule = command.clone();
        rule.keySet().removeAll(GENERIC_ARGUMENTS);
        if (rule.isDocument("data") && !rule.getDocument("data").containsKey("member")) {
            rule.getDocument("data").put("member", new BsonString(member));
        }
        return rule;
    }

    /** @param by how the log line names the client that turned it off */
    private static BsonDocument turnOff(PipeContext context, BsonDocument command, String member, String by) {
        BsonValue failPoint = command.get(CONFIGURE); // any type may arrive: no getString
        if (failPoint == null || !failPoint.isString() || !FAIL_POINT.equals(failPoint.asString().getValue())) {
            throw new RuleException(CONFIGURE, "must be \"failCommand\"");
        }
        if (context.rules().remove(ruleId(member))) {
            context.log().info("rule " + ruleId(member) + " removed (mode off)" + by);
        }
        return counted(context, member);
    }

    /** Sets the rule, with a log line naming it and the client ({@code by}): an app's failpoint is a fault injected too. */
    private static BsonDocument put(PipeContext context, Rule rule, String member, String by) {
        context.rules().put(rule);
        context.log().info("rule " + rule.id() + " set: " + Printable.of(rule.summary()) + by); // an app's namespace or appName may hold a newline
        return counted(context, member);
    }

    /** As the server answers: the times the failpoint was entered so far, which a new mode does not reset. */
    private static BsonDocument counted(PipeContext context, String member) {
        return new BsonDocument("count", countValue(context.rules().fired(ruleId(member)))).append("ok", new BsonDouble(1));
    }

    /** The id of the rule that is {@code member}'s failCommand failpoint (its advertised host:port). */
    static String ruleId(String member) {
        return FAIL_POINT + "@" + member;
    }

    /**
     * The failpoint's 64-bit count as the server's appendNumber appends it: an int while it lies within
     * 2^30 of zero, a long beyond (drivers read either).
     */
    static BsonValue countValue(long count) {
        return count > -(1 << 30) && count < (1 << 30) ? new BsonInt32((int) count) : new BsonInt64(count);
    }

    /** The server's refusal of a malformed waitForFailPoint, or null when it is well formed. */
    private static BsonDocument checkWait(BsonDocument command) {
        BsonValue failPoint = command.get(WAIT);
        if (!failPoint.isString()) {
            return ErrorReplies.commandError(TYPE_MISMATCH, "BSON field 'waitForFailPoint." + WAIT + "' is the wrong type '"
                    + ServerNumbers.typeName(failPoint) + "', expected type 'string'");
        }
        for (String required : new String[] {"timesEntered", "maxTimeMS"}) { // both required by the server's IDL
            if (!command.containsKey(required)) {
                return ErrorReplies.commandError(MISSING_REQUIRED_FIELD,
                        "BSON field 'waitForFailPoint." + required + "' is missing but a required field");
            }
        }
        for (String field : new String[] {"timesEntered", "maxTimeMS"}) { // both safeInt64 in the server's IDL
            BsonValue value = command.get(field);
            if (!ServerNumbers.isSafeInt64(value)) {
                return ErrorReplies.commandError(TYPE_MISMATCH, "BSON field 'waitForFailPoint." + field + "' is the wrong type '"
                        + ServerNumbers.typeName(value) + "', expected types '" + ServerNumbers.SAFE_INT64_TYPES);
            }
        }
        // timesEntered may be any number (a negative one is reached already); maxTimeMS is checked as on every command
        BsonValue maxTimeMS = command.get("maxTimeMS");
        long maxTimeMillis = ServerNumbers.safeNumberLong(maxTimeMS);
        if (maxTimeMillis < 0 || maxTimeMillis > Integer.MAX_VALUE) {
            return ErrorReplies.badValue(maxTimeMillis + " value for maxTimeMS is out of range [0, " + Integer.MAX_VALUE + "]");
        }
        if (maxTimeMS.isDouble() && Math.floor(maxTimeMS.asDouble().getValue()) != maxTimeMS.asDouble().getValue()) {
            return ErrorReplies.badValue("maxTimeMS has non-integral value");
        }
        return null;
    }
}
