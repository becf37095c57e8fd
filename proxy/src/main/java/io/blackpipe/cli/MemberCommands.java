package io.blackpipe.cli;

import io.blackpipe.fault.Direction;
import io.blackpipe.fault.Plural;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * Deployment-level faults: failover, taking one member away (outage, blackhole, restart) or slowing it (latency,
 * bandwidth), forgetting its idle connections (idle-timeout), and back (restore).
 */
final class MemberCommands {
    private MemberCommands() {
    }

    @Command(name = "failover", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "Make the primary step down (with --simulate-members: move the primary role to the next member).")
    static final class Failover extends AdminCommand {
        @Option(names = "--election", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "With --simulate-members: no member is primary for this long (500ms, 5s), as while a real set"
                        + " elects; then the next member is. Without it, at once.")
        Long election;

        @Option(names = "--rollback", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "With --simulate-members: the old primary had not replicated its last DURATION (up to 60s): what"
                        + " its writes below majority (w: 1) did in that time is rolled back, as mongod rolls back.")
        Long rollback;

        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            io.blackpipe.fault.Failover failover = asOptions(() -> new io.blackpipe.fault.Failover(election == null ? 0 : election,
                    rollback == null ? 0 : rollback));
            org.bson.BsonDocument answer = admin.json("POST", "failover" + failover.query(), null);
            out.println("failover started" + (election == null ? "" : ": no primary for " + election + " ms")
                    + (rollback == null ? "" : "; rolled back " + Plural.of(answer.getNumber("rolledBack").longValue(), "document")
                            + ", what the old primary's writes below majority did in its last " + rollback + " ms"));
            return 0;
        }
    }

    @Command(name = "outage", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "Take a member down: its listener closes its connections and refuses new ones.")
    static final class Outage extends Timed {
        Outage() {
            super("outage");
        }
    }

    @Command(name = "blackhole", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "Blackhole a member: connections are accepted but nothing passes until it ends, as across a network partition.")
    static final class Blackhole extends Timed {
        Blackhole() {
            super("blackhole");
        }
    }

    @Command(name = "latency", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "Slow a member's link to its clients: everything it sends them (replies, hellos, errors, a connection's end)"
                    + " arrives this much later, in order, as over a slow network (or what they send it, or both: --direction);"
                    + " a new latency replaces the last.")
    static final class Latency extends AdminCommand {
        @Mixin
        Member member;

        @Option(names = "--delay", required = true, paramLabel = "DURATION", converter = DurationConverter.class,
                description = "How late each message arrives (200ms, 1s; 0 with a --jitter).")
        long delay;

        @Option(names = "--jitter", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "Each message's delay is drawn evenly from delay - jitter to delay + jitter (never below 0), from the proxy's --seed.")
        long jitter;

        @Option(names = "--direction", paramLabel = "replies|requests|both", defaultValue = "replies",
                description = "Which way it slows: replies (what the member sends its clients, the default: a round trip takes"
                        + " the delay longer), requests (what they send it) or both (a round trip takes twice the delay longer).")
        String direction;

        @Mixin
        UntilRestore duration;

        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            io.blackpipe.fault.Latency latency = asOptions(() -> new io.blackpipe.fault.Latency(delay, jitter, Direction.parse(direction)));
            String query = "?delay=" + delay + "ms&jitter=" + jitter + "ms" + latency.direction().parameterUnless(io.blackpipe.fault.Latency.DEFAULT_DIRECTION)
                    + duration.parameter("&");
            member.post(admin, "latency", query);
            out.println("latency of " + latency.describeAndWay() + " on " + member.name + duration.describe());
            return 0;
        }
    }

    @Command(name = "bandwidth", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "Narrow a member's link to its clients: each connection carries at most this rate each way (or one way),"
                    + " so a large reply (or insert) arrives spread over time, as over a narrow network; a new bandwidth replaces the last.")
    static final class Bandwidth extends AdminCommand {
        @Mixin
        Member member;

        @Option(names = "--rate", required = true, paramLabel = "RATE", converter = RateConverter.class,
                description = "Bytes a second on each connection: 64KiB/s, 1MB/s, 500B/s (KB = 1000 B, KiB = 1024 B).")
        io.blackpipe.fault.Bandwidth rate;

        @Option(names = "--direction", paramLabel = "both|replies|requests", defaultValue = "both",
                description = "Which way it narrows: both (the default), replies (what the member sends its clients, Toxiproxy's"
                        + " downstream) or requests (what the clients send it, Toxiproxy's upstream).")
        String direction;

        @Mixin
        UntilRestore duration;

        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            io.blackpipe.fault.Bandwidth bandwidth = asOptions(() -> rate.towards(Direction.parse(direction)));
            String query = "?rate=" + bandwidth.bytesPerSecond() + bandwidth.direction().parameterUnless(io.blackpipe.fault.Bandwidth.DEFAULT_DIRECTION)
                    + duration.parameter("&");
            member.post(admin, "bandwidth", query);
            out.println("bandwidth of " + bandwidth.describeAndWay() + " on each connection of " + member.name + duration.describe());
            return 0;
        }
    }

    @Command(name = "idle-timeout", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "Put a middlebox on a member's links that forgets connections idle this long, as a cloud load balancer, a NAT"
                    + " gateway or a firewall does: the member's side ends, and what the client sends later is dropped or reset;"
                    + " a new idle timeout replaces the last.")
    static final class IdleTimeout extends AdminCommand {
        @Mixin
        Member member;

        @Option(names = "--after", required = true, paramLabel = "DURATION", converter = DurationConverter.Positive.class,
                description = "How long a connection may carry nothing either way before it is forgotten (30s, 4m; at least 1ms).")
        long after;

        @Option(names = "--then", paramLabel = "drop|reset", defaultValue = "drop",
                description = "What the client's next bytes meet: drop (nothing comes back: the client waits its own timeout;"
                        + " the default) or reset (a TCP reset).")
        String then;

        @Mixin
        UntilRestore duration;

        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            io.blackpipe.fault.IdleTimeout idle = asOptions(() -> new io.blackpipe.fault.IdleTimeout(after,
                    io.blackpipe.fault.IdleTimeout.Then.parse(then)));
            String query = "?after=" + after + "ms&then=" + idle.then().label() + duration.parameter("&");
            member.post(admin, "idleTimeout", query);
            out.println("idle timeout (" + idle.describe() + ") on each connection of " + member.name + duration.describe());
            return 0;
        }
    }

    @Command(name = "restart", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "Restart a member cleanly, as a rolling restart or a cloud's maintenance does: a primary steps down first;"
                    + " then it quiesces (every hello answered ShutdownInProgress, so drivers stop selecting it, while its commands go"
                    + " on), exits (what still runs is answered InterruptedAtShutdown, its connections close) and is down a while.")
    static final class Restart extends AdminCommand {
        @Mixin
        Member member;

        @Option(names = "--quiesce", paramLabel = "DURATION", converter = DurationConverter.class, defaultValue = "15s",
                description = "How long it quiesces before it exits (15s, mongod's for a SIGTERM since 5.0, by default; 0: none, as before 5.0).")
        long quiesce;

        @Option(names = "--down", paramLabel = "DURATION", converter = DurationConverter.Positive.class, defaultValue = "10s",
                description = "How long it is down before it listens again (10s by default; at least 1ms).")
        long down;

        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            io.blackpipe.fault.Restart restart = asOptions(() -> new io.blackpipe.fault.Restart(quiesce, down));
            member.post(admin, "restart", restart.query());
            out.println("restart of " + member.name + " (" + restart.describe() + ")");
            return 0;
        }
    }

    @Command(name = "restore", mixinStandardHelpOptions = true, versionProvider = Version.class,
            description = "End an outage, blackhole, latency, bandwidth, idle timeout or restart of a member now.")
    static final class Restore extends AdminCommand {
        @Mixin
        Member member;

        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            member.post(admin, "restore", "");
            out.println("restored " + member.name);
            return 0;
        }
    }

    /** outage and blackhole: a member and an optional duration. */
    abstract static class Timed extends AdminCommand {
        private final String action;

        @Mixin
        Member member;

        @Mixin
        UntilRestore duration;

        Timed(String action) {
            this.action = action;
        }

        @Override
        int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
            member.post(admin, action, duration.parameter("?"));
            out.println(action + " of " + member.name + duration.describe());
            return 0;
        }
    }

    /** The member a command acts on, as the admin API names it. */
    static final class Member {
        @Spec(Spec.Target.MIXEE)
        CommandSpec command;

        @Parameters(paramLabel = "MEMBER", description = "primary, secondary (every secondary), all, or a member's host:port.")
        String name;

        /** POSTs this member's {@code action} with its {@code query} ("" or "?..."); a member the proxy does not front is a usage error. */
        void post(AdminClient admin, String action, String query) throws AdminClient.Failure {
            admin.callOnMember("POST", "members/" + AdminClient.encode(name) + "/" + action + query,
                    unknown -> new ParameterException(command.commandLine(), "MEMBER: " + unknown));
        }
    }

    /** How long a member's fault lasts: a duration, or until {@code restore}. */
    static final class UntilRestore {
        @Option(names = "--duration", paramLabel = "DURATION", converter = DurationConverter.AtLeastOneMilli.class,
                description = "How long (500ms, 10s, 2m; at least 1ms); without it, until `restore`.")
        Long millis;

        /** The admin API's duration parameter after {@code separator} ("?" or "&"), or nothing until restore. */
        String parameter(String separator) {
            return millis == null ? "" : separator + "duration=" + millis + "ms";
        }

        /** As the command's output ends: " for 500 ms" or " until restore". */
        String describe() {
            return millis == null ? " until restore" : " for " + millis + " ms";
        }
    }
}
