package io.blackpipe.topology;

import io.blackpipe.wire.CommandFacts;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.function.Function;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/**
 * A replica set of N members presented over one real upstream node, so failover can be tested
 * where only a single node exists. Every simulated member dials the same upstream; hello replies
 * are rewritten per member (hosts, me, primary, role, electionId), and a failover moves the
 * primary role as an election would (as does putting it back on the first member: the electionId
 * only ever grows). Each member is a process of its own with a topologyVersion of its own (where the
 * real node reports one: servers before 4.4 do not, and drivers poll them), whose counter an election
 * moves on: a driver that streams hello hears of it from the awaitable hello the member holds,
 * answered at once as a real set's members answer theirs; one that polls, from the state-change
 * error whose newer counter makes it check the member again.
 */
public final class SimulatedReplicaSet {
    /** The configuration version every simulated member reports: the simulation never reconfigures. */
    private static final int SET_VERSION = 1;
    private final String setName;
    private final List<MemberAddress> members;
    private final MemberMap addresses;
    private final MemberStates states;
    /** Each member's topologyVersion.processId: in a real set, each member is a process of its own. */
    private final Map<MemberAddress, BsonObjectId> processIds = new LinkedHashMap<>();
    /** No member is primary: an election is under way ({@link #beginElection}). */
    private static final int NO_PRIMARY = -1;
    private volatile int primary;
    /** The member the election under way makes primary (while {@code primary} is {@link #NO_PRIMARY}). */
    private int electing;
    /** The election term; also every member's topologyVersion.counter, since each election changes every member's state. */
    private volatile long election;
    /** The commands the real node lists (listCommands), lower case; null while unknown (a node without listCommands). */
    private volatile Set<String> nodeCommands;

    /**
     * @param members   the simulated members' names, in order; the first starts as primary
     * @param firstTerm the term (electionId) the set starts in: {@link #termAboveEarlierRuns()} for a proxy, so that a
     *                  driver that outlived an earlier proxy on these ports takes the new primary for a newer one
     */
    public SimulatedReplicaSet(String setName, List<MemberAddress> members, MemberMap addresses, MemberStates states, long firstTerm) {
        if (members.size() < 2) {
            throw new IllegalArgumentException("--simulate-members needs at least 2 members, got " + members.size());
        }
        this.setName = setName;
        this.election = firstTerm;
        this.members = List.copyOf(members);
        this.addresses = addresses;
        this.states = states;
        this.members.forEach(member -> processIds.put(member, new BsonObjectId(new ObjectId())));
    }

    /** The deployment of N simulated members, all dialling the one real node {@code real}'s discovery reached. */
    public static Discovery.Deployment deployment(Discovery.Deployment real, int count) {
        if (!real.isReplicaSet()) {
            // a driver would see a set and send what only a set's member takes (every retryable write's txnNumber:
            // a standalone refuses it), and msg: isdbgrid makes a mongos's simulated members routers to the Node.js driver
            int servers = real.members().size();
            throw new IllegalStateException("--simulate-members needs a single-node replica set; this upstream is "
                    + (servers == 1 ? "a " + real.kind() : servers + " " + real.kind() + " servers") + (real.kind().equals("standalone")
                    ? " (start mongod with --replSet rs0 and run rs.initiate(): a set of one member)"
                    : " (name one member of a shard's replica set, or a single-node replica set)"));
        }
        if (real.members().size() != 1 || real.answered() == null) {
            throw new IllegalStateException("--simulate-members needs a single upstream node; this upstream is a " + real.kind()
                    + " of " + real.members().size() + " members (use failover on the real set instead)");
        }
        MemberAddress node = real.dialAliases().getOrDefault(real.members().get(0), real.members().get(0));
        List<MemberAddress> names = names(node, count);
        Map<MemberAddress, MemberAddress> dial = new LinkedHashMap<>();
        names.forEach(name -> dial.put(name, node));
        return new Discovery.Deployment(real.setName(), names, "simulated replica set of " + count + " members over a "
                + real.kind(), dial, null, real.hello(), real.quirks());
    }

    /** The names of N simulated members of an upstream reached at {@code real}. */
    public static List<MemberAddress> names(MemberAddress real, int count) {
        List<MemberAddress> names = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            names.add(new MemberAddress("simulated-" + i, real.port()));
        }
        return names;
    }

    /** The simulated members' names, in order. */
    public List<MemberAddress> members() {
        return members;
    }

    /**
     * The commands the real node has, from its listCommands: a member answers one it lacks as
     * CommandNotFound before it looks at its role. Compared without case: listCommands leaves the
     * node's aliases out, and they are its commands' names in lower case (findandmodify, buildinfo).
     */
    public void nodeCommands(Collection<String> names) {
        Set<String> lower = new HashSet<>();
        names.forEach(name -> lower.add(name.toLowerCase(Locale.ROOT)));
        nodeCommands = lower;
    }

    /** Whether the real node surely lacks {@code command}: false while its commands are unknown. */
    public boolean nodeLacks(String command) {
        Set<String> known = nodeCommands;
        return known != null && !known.contains(command.toLowerCase(Locale.ROOT));
    }

    /**
     * A first term above any an earlier proxy's set reached (its start plus its elections, far fewer than one a ms):
     * ms since 2020. A driver takes a primary of a lower electionId than it has seen for stale (SDAM), so after a
     * proxy's restart (a sidecar's, the app's client kept) a set begun at 1 again had no primary for it.
     */
    public static long termAboveEarlierRuns() {
        return System.currentTimeMillis() - 1_577_836_800_000L;
    }

    /** The elections so far: the term of the set's replies. */
    public long term() {
        return election;
    }

    public String setName() {
        return setName;
    }

    public boolean isPrimary(MemberAddress member) {
        return members.indexOf(member) == primary;
    }

    /** Moves the primary role to {@code next} (one of {@link #members}) and starts a new election term. */
    public synchronized MemberAddress failover(MemberAddress next) {
        refuseDuringAnElection();
        primary = members.indexOf(next);
        election++;
        return members.get(primary);
    }

    /**
     * The primary steps down and no member is primary until {@link #endElection}, as while a real set elects: every
     * member calls itself a secondary and names no primary, so writes are refused everywhere and a driver waits to
     * select a primary. Each member's state changed, so the counter moves on. {@code next} is to be elected; returned.
     */
    public synchronized MemberAddress beginElection(MemberAddress next) {
        refuseDuringAnElection();
        electing = members.indexOf(next);
        primary = NO_PRIMARY;
        election++;
        return members.get(electing);
    }

    /** The election under way ends: {@code winner} (from it, the one to be elected, on) is primary, in a new term; null when none was under way. */
    public synchronized MemberAddress endElection(Function<MemberAddress, MemberAddress> winner) {
        if (primary != NO_PRIMARY) {
            return null;
        }
        primary = members.indexOf(winner.apply(members.get(electing)));
        election++;
        return members.get(primary);
    }

    private void refuseDuringAnElection() {
        if (primary == NO_PRIMARY) {
            throw new IllegalStateException("no member is primary: an election is under way, and " + members.get(electing)
                    + " is elected when it ends (a reset ends it now, with the first member primary)");
        }
    }

    /**
     * Puts the primary role back on the first member, as the set started, by one more election:
     * the term (electionId) moves on, never back, since a driver takes a primary with an older
     * electionId than it has seen for a stale one and ignores it. Returns the first member, or
     * null when it is primary already (nothing moved, no election).
     */
    public synchronized MemberAddress restoreFirstPrimary() {
        if (primary == 0) {
            return null;
        }
        primary = 0;
        election++;
        return members.get(0);
    }

    /** Records what each simulated member says about itself, from the real node's hello {@code realHello}. */
    public synchronized void observe(BsonDocument realHello) {
        for (Member member : addresses.members()) {
            BsonDocument hello = realHello.clone();
            rewrite(hello, member.upstream());
            states.observe(member.upstream(), hello);
        }
    }

    /**
     * Rewrites the upstream's hello reply passing to a client as {@code member} would send it, records that as
     * the member's state, and gives it the member's counter, in one step: a failover on another thread comes
     * before or after all three, never between (else the member's record would keep the role it had before
     * the failover until its next hello, or a reply name the new primary with the old counter).
     */
    public synchronized void rewriteAndObserve(BsonDocument hello, MemberAddress member) {
        rewrite(hello, member);
        states.observe(member, hello); // without the shift of injected errors, as for a real member
        states.shiftReply(member, hello);
    }

    /** {@link #rewrite} with the member's counter, for what does not record its state: a reply made from one it sent before, serverStatus's repl. */
    public synchronized void rewriteWithCounter(BsonDocument hello, MemberAddress member) {
        rewrite(hello, member);
        states.shiftReply(member, hello);
    }

    /**
     * Rewrites the upstream's hello reply as {@code member} of the simulated set would send it. Under the lock a
     * failover takes, so that one reply names one primary and its election: its role, its primary and its
     * electionId read apart would mix the roles before a failover with the election after it.
     */
    public synchronized boolean rewrite(BsonDocument hello, MemberAddress member) {
        boolean isPrimary = isPrimary(member);
        BsonArray hosts = new BsonArray();
        for (MemberAddress name : members) {
            hosts.add(new BsonString(advertised(name)));
        }
        hello.put("setName", new BsonString(setName));
        hello.put("hosts", hosts);
        hello.remove("passives");
        hello.remove("arbiters");
        hello.put("me", new BsonString(advertised(member)));
        if (primary == NO_PRIMARY) {
            hello.remove("primary"); // as a real member's hello while the set elects
        } else {
            hello.put("primary", new BsonString(advertised(members.get(primary))));
        }
        hello.put(hello.containsKey("ismaster") && !hello.containsKey("isWritablePrimary") ? "ismaster" : "isWritablePrimary",
                BsonBoolean.valueOf(isPrimary));
        if (hello.containsKey("ismaster")) {
            hello.put("ismaster", BsonBoolean.valueOf(isPrimary));
        }
        hello.put("secondary", BsonBoolean.valueOf(!isPrimary));
        hello.put("setVersion", new BsonInt32(SET_VERSION));
        if (isPrimary) {
            hello.put("electionId", new BsonObjectId(electionId()));
        } else {
            hello.remove("electionId");
        }
        if (hello.isDocument("topologyVersion")) {
            hello.put("topologyVersion", topologyVersion(member));
        }
        if (!hello.isDocument("lastWrite")) {
            hello.put("lastWrite", SetDescriptions.lastWriteNow(election));
        }
        return true;
    }

    /** The member's topologyVersion, before the shift of injected state-change errors ({@link MemberStates}). */
    public synchronized BsonDocument topologyVersion(MemberAddress member) {
        return new BsonDocument("processId", processIds.get(member)).append("counter", new BsonInt64(election));
    }

    /**
     * Makes an awaitable hello to {@code member} (its injected shift removed) one the real node takes,
     * by putting the real node's topologyVersion {@code realVersion} for the member's: the node then
     * holds it as the member would, until its own state changes or maxAwaitTimeMS ends (an election
     * ends the member's wait here: {@code HelloExchange#answerAwaitingNow}). A hello that asks about an
     * older counter than the member's (sent before an election) is answered at once, as the member
     * would: it gets a processId the node never had. False when the hello asks about no
     * topologyVersion of this member's (the node answers at once a processId not its own), or a malformed one (the node
     * refuses it, as it parses a hello before it reads it).
     */
    public synchronized boolean asTheRealNodeAwaits(BsonDocument request, MemberAddress member, BsonValue realVersion) {
        BsonValue asked = request.get("topologyVersion");
        if (asked == null || !asked.isDocument() || !processIds.get(member).equals(asked.asDocument().get("processId"))) {
            return false;
        }
        BsonValue counter = asked.asDocument().get("counter");
        if (counter == null || !counter.isInt64() || asked.asDocument().size() != 2) {
            // malformed (mongod's TopologyVersion is a processId and a long counter, nothing else): the node refuses it
            return false;
        }
        boolean current = counter.asInt64().getValue() == election;
        request.put("topologyVersion", current && realVersion != null && realVersion.isDocument() ? realVersion.asDocument().clone()
                : new BsonDocument("processId", new BsonObjectId(new ObjectId())).append("counter", new BsonInt64(0)));
        return true;
    }

    /**
     * Rewrites the upstream's replSetGetStatus reply as {@code member} of the simulated set would
     * send it, in step with {@link #rewrite}: the members are hello's hosts, each in its simulated
     * role, {@code member} the one marked self; myState is its role and term the elections that
     * hello's electionId counts. The real node's own entry is the pattern of every entry. False
     * when the reply has no member entry to start from.
     */
    public synchronized boolean rewriteStatus(BsonDocument status, MemberAddress member) {
        BsonDocument pattern = SetDescriptions.ownEntry(status);
        if (pattern == null) {
            return false;
        }
        int primaryNow = primary; // one failover may not split one reply
        BsonArray entries = new BsonArray();
        for (int i = 0; i < members.size(); i++) {
            BsonDocument entry = pattern.clone();
            entry.put("_id", new BsonInt32(i));
            entry.put("name", new BsonString(advertised(members.get(i))));
            entry.put("state", new BsonInt32(i == primaryNow ? 1 : 2));
            entry.put("stateStr", new BsonString(i == primaryNow ? "PRIMARY" : "SECONDARY"));
            inRole(entry, i == primaryNow, primaryNow);
            if (entry.containsKey("configVersion")) {
                entry.put("configVersion", new BsonInt32(SET_VERSION));
            }
            if (members.get(i).equals(member)) {
                entry.put("self", BsonBoolean.TRUE);
            } else {
                entry.remove("self");
            }
            entries.add(entry);
        }
        boolean isPrimary = members.indexOf(member) == primaryNow;
        status.put("set", new BsonString(setName));
        status.put("myState", new BsonInt32(isPrimary ? 1 : 2));
        if (status.containsKey("term")) {
            status.put("term", new BsonInt64(election));
        }
        inRole(status, isPrimary, primaryNow);
        status.put("members", entries);
        return true;
    }

    /**
     * Rewrites the real node's reply to a command that {@link SetDescriptions#describesTheSet} as
     * {@code member} of the simulated set would send it, in step with its hello: replSetGetStatus
     * ({@link #rewriteStatus}), serverStatus's repl section (the member's hello, rewritten as hello
     * is), and replSetGetConfig and local.system.replset ({@link #rewriteConfig}); false when the
     * reply holds none of what the real node says of itself (a standalone's serverStatus, say).
     */
    public boolean rewriteReply(CommandFacts command, BsonDocument reply, MemberAddress member) {
        return SetDescriptions.rewrite(command, reply, new SetDescriptions.View() {
            @Override
            public boolean status(BsonDocument status) {
                return rewriteStatus(status, member);
            }

            @Override
            public boolean config(BsonDocument config) {
                return rewriteConfig(config);
            }

            @Override
            public boolean repl(BsonDocument repl) {
                rewriteWithCounter(repl, member);
                return true;
            }
        });
    }

    /**
     * Rewrites the real node's replica set configuration as the simulated set's, in step with
     * hello: its name, hello's setVersion, and one member per simulated member under the name
     * hello lists, each like the real node's own entry (the config of the single node a simulation
     * runs over names only it). False when the config has no member entry to start from.
     */
    public boolean rewriteConfig(BsonDocument config) {
        return SetDescriptions.asConfigOf(config, setName, members.stream().map(this::advertised).toList(), SET_VERSION);
    }

    /** The fields where a primary's account of a member differs from a secondary's: election and sync source. */
    private void inRole(BsonDocument document, boolean isPrimary, int primaryNow) {
        if (!isPrimary) {
            document.remove("electionTime");
            document.remove("electionDate");
            document.remove("electionCandidateMetrics");
        }
        if (document.containsKey("syncSourceHost")) {
            boolean syncs = !isPrimary && primaryNow != NO_PRIMARY;
            document.put("syncSourceHost", new BsonString(syncs ? advertised(members.get(primaryNow)) : ""));
            document.put("syncSourceId", new BsonInt32(syncs ? primaryNow : -1));
        }
    }

    private ObjectId electionId() {
        return new ObjectId(String.format("7fffffff%016x", election));
    }

    private String advertised(MemberAddress member) {
        Member known = addresses.byUpstream(member);
        return known == null ? member.toString() : known.advertised().toString();
    }
}
