package io.blackpipe.pipe;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import io.blackpipe.BlackPipe;
import io.blackpipe.topology.Member;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;

/**
 * The control thread of {@link ControlChurnTest}: each {@link #step()} does one control operation at
 * random (from its seed), through the Java API or the admin HTTP API, as a test suite or an operator
 * would while traffic flows (and, in a single-member set, where no failover can be, as an app does with
 * configureFailPoint and waitForFailPoint). Rules that leave a command waiting for its client to give up
 * (hang) are kept to the app whose driver has a socket timeout; everything else applies to every app.
 */
final class ChurnControl {
    static final String IMPATIENT = "churn-impatient";
    private static final int RULE_IDS = 8;
    private static final int[] ERROR_CODES = {10107, 91, 11600, 13, 0, 189, 6, 262};

    private final BlackPipe blackPipe;
    /** Whether some member can be secondary (and fail over): false for a single-member set. */
    private final boolean severalMembers;
    /** A client of the app's own, whose configureFailPoint and waitForFailPoint the proxy answers. */
    private final MongoDatabase appAdmin;
    private final Random random;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String admin;
    private final List<String> memberNames = new ArrayList<>();
    /** How many times each operation ran, and how many found no member in the role it named. */
    final Map<String, AtomicLong> done = new ConcurrentHashMap<>();

    ChurnControl(BlackPipe blackPipe, long seed, MongoClient app) {
        this.blackPipe = blackPipe;
        this.severalMembers = blackPipe.server().members().size() > 1;
        this.appAdmin = app.getDatabase("admin");
        this.random = new Random(seed);
        this.admin = blackPipe.adminUrl() + "/api/v1";
        for (Member member : blackPipe.server().members()) {
            memberNames.add(member.upstream().toString());
            memberNames.add(member.advertised().toString());
        }
    }

    void step() throws Exception {
        int dice = random.nextInt(100);
        if (dice < 22) {
            putRule();
        } else if (dice < 30) {
            count(random.nextBoolean() ? "removeRule" : "removeRule(http)");
            String id = "churn-" + random.nextInt(RULE_IDS);
            if (random.nextBoolean()) {
                blackPipe.removeRule(id);
            } else {
                expect(send("DELETE", "/rules/" + id, null), 200, 404);
            }
        } else if (dice < 32) {
            count("clearRules");
            blackPipe.clearRules();
        } else if (dice < 38) {
            count("scenario");
            expect(send("POST", "/scenario", scenario().toJson()), 200, 201);
        } else if (dice < 42) {
            count("stopScenario");
            expect(send("DELETE", "/scenario", null), 200);
        } else if (dice < 49) {
            deploymentFault("outage");
        } else if (dice < 57) {
            deploymentFault("blackhole");
        } else if (dice < 66) {
            String member = member();
            count("restore");
            if (random.nextBoolean()) {
                onMember(member, () -> blackPipe.restore(member));
            } else {
                expect(send("POST", "/members/" + encode(member) + "/restore", null), 200, 404);
            }
        } else if (dice < 71) {
            String member = member();
            count("connectionsReset");
            onMember(member, () -> blackPipe.resetConnections(member));
        } else if (dice < 76 && !severalMembers) {
            failPointFromTheApp();
        } else if (dice < 76) {
            count("failover");
            if (random.nextBoolean()) {
                blackPipe.failover();
            } else {
                expect(send("POST", "/failover", null), 200);
            }
        } else if (dice < 78) {
            count("reset");
            if (random.nextBoolean()) {
                blackPipe.reset();
            } else {
                expect(send("POST", "/reset", null), 200);
            }
        } else {
            String[] reads = {"/stats", "/history", "/rules", "/members", "/connections", "/scenario"};
            String read = reads[random.nextInt(reads.length)];
            count("GET " + read);
            expect(send("GET", read, null), 200);
            if (random.nextInt(4) == 0) {
                blackPipe.history();
                blackPipe.rules();
                blackPipe.server().registry().getMeters();
            }
        }
    }

    /** configureFailPoint (or mode off) and waitForFailPoint sent by an app: the proxy takes them as its failCommand rule. */
    private void failPointFromTheApp() {
        BsonDocument command = random.nextInt(4) == 0
                ? new BsonDocument("configureFailPoint", new BsonString("failCommand")).append("mode", new BsonString("off"))
                : rule();
        if (random.nextInt(3) == 0) {
            command = new BsonDocument("waitForFailPoint", new BsonString("failCommand"))
                    .append("timesEntered", new BsonInt32(random.nextInt(3))).append("maxTimeMS", new BsonInt32(50));
        }
        String name = command.getFirstKey();
        try {
            appAdmin.runCommand(command);
            count(name + "(app)");
        } catch (MongoException e) { // the app's command is traffic too: the rules and faults in force reach it
            count(name + "(app) " + e.getClass().getSimpleName());
        }
    }

    private void deploymentFault(String kind) throws Exception {
        String member = member();
        long millis = random.nextBoolean() ? 0 : 1 + random.nextInt(800);
        count(kind + (millis == 0 ? " until restored" : " timed"));
        if (random.nextBoolean()) {
            Duration duration = Duration.ofMillis(millis);
            onMember(member, () -> {
                if (kind.equals("outage")) {
                    blackPipe.outage(member, duration);
                } else {
                    blackPipe.blackhole(member, duration);
                }
            });
        } else {
            expect(send("POST", "/members/" + encode(member) + "/" + kind + (millis == 0 ? "" : "?duration=" + millis + "ms"), null),
                    200, 404);
        }
    }

    /** "primary" and "secondary" may name no member for a moment (roles move): that is the API's answer, not a failure. */
    private void onMember(String member, Runnable action) {
        try {
            action.run();
        } catch (IllegalArgumentException e) {
            if (!member.equals("primary") && !member.equals("secondary")) {
                throw e;
            }
            count("no " + member + " now");
        }
    }

    private void putRule() throws Exception {
        String id = "churn-" + random.nextInt(RULE_IDS);
        BsonDocument rule = rule();
        count("putRule " + describe(rule));
        if (random.nextBoolean()) {
            blackPipe.rule(id, rule.toJson());
        } else {
            expect(send("PUT", "/rules/" + id, rule.toJson()), 200, 201);
        }
    }

    /** A failCommand rule on insert and/or find (now and then on every command), with one action and a mode. */
    BsonDocument rule() {
        BsonDocument data = new BsonDocument();
        boolean allCommands = random.nextInt(10) == 0;
        if (allCommands) {
            data.put("failAllCommands", BsonBoolean.TRUE);
        } else {
            BsonArray commands = new BsonArray();
            int which = random.nextInt(3);
            if (which != 1) {
                commands.add(new BsonString("insert"));
            }
            if (which != 0) {
                commands.add(new BsonString("find"));
            }
            data.put("failCommands", commands);
        }
        boolean impatientOnly = false;
        switch (random.nextInt(allCommands ? 4 : 11)) {
            case 0 -> data.put("errorCode", new BsonInt32(ERROR_CODES[random.nextInt(ERROR_CODES.length)]));
            case 1 -> data.put("closeConnection", BsonBoolean.TRUE);
            case 2 -> {
                data.put("blockConnection", BsonBoolean.TRUE);
                data.put("blockTimeMS", new BsonInt32(10 + random.nextInt(500)));
                if (random.nextBoolean()) {
                    data.put("errorCode", new BsonInt32(ERROR_CODES[random.nextInt(ERROR_CODES.length)]));
                }
            }
            case 3 -> data.put("resetConnection", BsonBoolean.TRUE);
            case 4 -> {
                data.put("hang", BsonBoolean.TRUE);
                impatientOnly = true;
            }
            case 5 -> {
                data.put("delayReplyMS", new BsonInt32(10 + random.nextInt(500)));
                if (random.nextBoolean()) {
                    data.put("delayReplyJitterMS", new BsonInt32(random.nextInt(100)));
                }
            }
            case 6 -> {
                data.put("trickleReplyBytes", new BsonInt32(8 + random.nextInt(64)));
                data.put("trickleReplyIntervalMS", new BsonInt32(5 + random.nextInt(100)));
            }
            case 7 -> data.put("dropReply", BsonBoolean.TRUE);
            case 8 -> { // a reply of the command's own shape, so one command: a find's reply to an insert is no driver's business
                boolean find = data.getArray("failCommands").contains(new BsonString("find"));
                data.put("failCommands", new BsonArray(List.of(new BsonString(find ? "find" : "insert"))));
                data.put("cannedReply", BsonDocument.parse(find
                        ? "{ok: 1, cursor: {id: {$numberLong: '0'}, ns: 'churn.c', firstBatch: []}}" : "{ok: 1, n: 1}"));
            }
            case 9 -> {
                data.put("writeConcernError", BsonDocument.parse("{code: 64, errmsg: 'waiting for replication timed out'}"));
                if (!data.getArray("failCommands").contains(new BsonString("insert"))) { // a rule no command of it takes is refused
                    data.getArray("failCommands").add(new BsonString("insert"));
                }
            }
            default -> data.put("errorCode", new BsonInt32(91));
        }
        if (impatientOnly || random.nextInt(6) == 0) {
            data.put("appName", new BsonString(IMPATIENT));
        }
        if (random.nextInt(5) == 0) {
            data.put("member", new BsonString(random.nextBoolean() ? "primary" : memberNames.get(random.nextInt(memberNames.size()))));
        }
        if (random.nextInt(8) == 0) {
            data.put("attempt", new BsonString(random.nextBoolean() ? "first" : "retry"));
        }
        BsonDocument mode = switch (random.nextInt(4)) {
            case 0 -> new BsonDocument("times", new BsonInt32(1 + random.nextInt(5)));
            case 1 -> new BsonDocument("skip", new BsonInt32(random.nextInt(5)));
            case 2 -> new BsonDocument("activationProbability", new org.bson.BsonDouble(0.05 + random.nextDouble() * 0.3));
            default -> null;
        };
        return new BsonDocument("configureFailPoint", new BsonString("failCommand"))
                .append("mode", mode == null ? new BsonString("alwaysOn") : mode)
                .append("data", data);
    }

    /** A scenario of a rule or two and a short timeline of deployment faults, rule changes and a failover. */
    private BsonDocument scenario() {
        List<String> ids = new ArrayList<>();
        BsonArray rules = new BsonArray();
        for (int i = random.nextInt(3); i > 0; i--) {
            ids.add("scenario-" + ids.size());
            rules.add(rule().append("id", new BsonString(ids.get(ids.size() - 1))));
        }
        BsonArray timeline = new BsonArray();
        List<String> inForce = new ArrayList<>(ids); // a remove must find its rule in force: the steps go in time order
        int at = 0;
        for (int i = random.nextInt(5); i > 0; i--) {
            at += random.nextInt(375);
            BsonDocument step = new BsonDocument("at", new BsonInt32(at));
            switch (random.nextInt(8)) {
                case 0 -> {
                    ids.add("scenario-" + ids.size());
                    inForce.add(ids.get(ids.size() - 1));
                    step.put("add", rule().append("id", new BsonString(ids.get(ids.size() - 1))));
                }
                case 1 -> {
                    if (inForce.isEmpty()) {
                        step.put("clear", BsonBoolean.TRUE);
                    } else {
                        step.put("remove", new BsonString(inForce.remove(random.nextInt(inForce.size()))));
                    }
                }
                case 2, 3 -> {
                    BsonDocument fault = new BsonDocument("member", new BsonString(member()));
                    if (random.nextBoolean()) {
                        fault.put("duration", new BsonInt32(1 + random.nextInt(600)));
                    }
                    step.put(random.nextBoolean() ? "outage" : "blackhole", fault);
                }
                case 4 -> step.put("restore", new BsonString(member()));
                case 5 -> {
                    step.put(severalMembers ? "failover" : "clear", severalMembers ? new BsonDocument() : BsonBoolean.TRUE);
                    if (!severalMembers) {
                        inForce.clear();
                    }
                }
                case 6 -> {
                    step.put("clear", BsonBoolean.TRUE);
                    inForce.clear();
                }
                default -> {
                    step.put("end", BsonBoolean.TRUE);
                    i = 1; // the last step: no step may come after an end
                }
            }
            timeline.add(step);
        }
        return new BsonDocument("name", new BsonString("churn")).append("description", new BsonString("random"))
                .append("rules", rules).append("timeline", timeline);
    }

    private String member() {
        return switch (random.nextInt(5)) {
            case 0 -> "primary";
            case 1 -> severalMembers ? "secondary" : "primary";
            case 2 -> "all";
            default -> memberNames.get(random.nextInt(memberNames.size()));
        };
    }

    private static String describe(BsonDocument rule) {
        BsonDocument data = rule.getDocument("data");
        for (String action : List.of("hang", "delayReplyMS", "trickleReplyBytes", "blockConnection", "dropReply", "resetConnection",
                "closeConnection", "cannedReply", "writeConcernError", "errorCode")) {
            if (data.containsKey(action)) {
                return action;
            }
        }
        return "?";
    }

    private void count(String operation) {
        done.computeIfAbsent(operation, k -> new AtomicLong()).incrementAndGet();
    }

    record Answer(String what, int status, String body) {
    }

    private Answer send(String method, String path, String body) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(admin + path)).timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        return new Answer(method + " " + path, response.statusCode(), response.body());
    }

    /** A 404 is only taken for a member in a role no member has at the moment, or a rule removed already. */
    private void expect(Answer answer, int... statuses) {
        for (int status : statuses) {
            if (answer.status() == status) {
                if (status == 404 && !answer.body().contains("no member is") && !answer.what().startsWith("DELETE /rules/")) {
                    break;
                }
                if (status == 404 && answer.body().contains("no member is")) {
                    count("no member in the role now (http)");
                }
                return;
            }
        }
        throw new AssertionError(answer.what() + " answered " + answer.status() + ": " + answer.body());
    }

    private static String encode(String member) {
        return URLEncoder.encode(member, StandardCharsets.UTF_8);
    }
}
