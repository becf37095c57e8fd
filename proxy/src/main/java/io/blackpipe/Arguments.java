package io.blackpipe;

import io.blackpipe.admin.AdminHttp;
import io.blackpipe.admin.AdminToken;
import io.blackpipe.fault.Direction;
import io.blackpipe.fault.Failover;
import io.blackpipe.fault.JsonDocuments;
import io.blackpipe.fault.Latency;
import io.blackpipe.fault.Restart;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import org.bson.BsonDocument;
import org.bson.json.JsonParseException;

/**
 * The arguments BlackPipe and RemoteBlackPipe check alike before anything is done with them: a
 * mistake is an IllegalArgumentException naming the argument in both, never a NullPointerException
 * or BSON's "Value can not be null".
 */
final class Arguments {
    private Arguments() {
    }

    /** {@code value}, or an IllegalArgumentException "what: required, got null". */
    static <T> T required(T value, String what) {
        if (value == null) {
            throw new IllegalArgumentException(what + ": required, got null");
        }
        return value;
    }

    /** A document's own id, if it has one, must be the id the rule is added under, as PUT /api/v1/rules/{id} refuses another. */
    static void sameId(String id, BsonDocument document) {
        if (document.containsKey("id") && !(document.isString("id") && document.getString("id").getValue().equals(id))) {
            throw new IllegalArgumentException("id: " + (document.isString("id") ? "'" + document.getString("id").getValue()
                    + "' differs from '" + id + "'" : "must be a string, got " + document.get("id").getBsonType().name().toLowerCase()));
        }
    }

    static String ruleId(String id) {
        if (required(id, "id").isEmpty()) {
            throw new IllegalArgumentException("id: must not be empty");
        }
        return id;
    }

    static String member(String member) {
        if (member == null) {
            throw new IllegalArgumentException("member: required (primary, secondary, all or host:port), got null");
        }
        return member;
    }

    static String scenarioName(String name) {
        if (name == null) {
            throw new IllegalArgumentException("name: required, e.g. \"transient-blip\"");
        }
        return name;
    }

    static Path scenarioFile(Path file) {
        return required(file, "file");
    }

    /** "cannot read scenario F: no such file" (an IOException's own message is often the bare path again). */
    static UncheckedIOException cannotReadScenario(Path file, IOException e) {
        String why = e instanceof NoSuchFileException ? "no such file"
                : e instanceof AccessDeniedException ? "permission denied"
                : Files.isDirectory(file) ? "a directory, not a file" : e.getMessage();
        return new UncheckedIOException("cannot read scenario " + file + ": " + why, e);
    }

    /** Zero: until restored; otherwise at least 1 ms, as the CLI, the admin API and scenarios take it. */
    static long millis(Duration duration) {
        if (duration == null) {
            throw new IllegalArgumentException("duration: required (Duration.ZERO: until restored), got null");
        }
        long millis = toMillis(duration, "duration");
        if (duration.isNegative() || (!duration.isZero() && millis < 1)) {
            throw new IllegalArgumentException("duration: must be zero (until restored) or at least 1ms, got " + duration);
        }
        return millis;
    }

    /** {@code duration}'s whole milliseconds; one past a long's is refused naming {@code what}, not toMillis()'s ArithmeticException. */
    static long toMillis(Duration duration, String what) {
        if (duration.compareTo(Duration.ofMillis(Long.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException(what + ": beyond any time blackpipe can wait for, got " + duration);
        }
        return duration.toMillis();
    }

    /** How long a simulated set has no primary in a failover: zero (the next member at once) or at least 1ms. */
    static long electionMillis(Duration election) {
        if (election == null || election.isNegative() || (!election.isZero() && toMillis(election, "election") < 1)) {
            throw new IllegalArgumentException("election: must be zero (the next member primary at once) or at least 1ms, got "
                    + election);
        }
        return election.toMillis();
    }

    /** A failover's election ({@link #electionMillis}) and rollback: zero (nothing rolled back) to 60s, whole milliseconds. */
    static Failover failover(Duration election, Duration rollback) {
        if (rollback == null || rollback.isNegative() || rollback.getNano() % 1_000_000 != 0) {
            throw new IllegalArgumentException("rollback: must be whole milliseconds from zero (nothing rolled back) to 60s, got "
                    + rollback);
        }
        return new Failover(electionMillis(election), toMillis(rollback, "rollback"));
    }

    /** {@code what}, a length of time: whole milliseconds from 1 (a part of a millisecond would be cut off). */
    static long positiveMillis(Duration duration, String what) {
        if (duration == null || duration.isNegative() || duration.isZero() || duration.getNano() % 1_000_000 != 0) {
            throw new IllegalArgumentException(what + ": must be whole milliseconds from 1ms, got " + duration);
        }
        return toMillis(duration, what);
    }

    /** A member's latency: a delay and a jitter, each zero or whole milliseconds up to a day, not both zero; a direction. */
    static Latency latency(Duration delay, Duration jitter, Direction direction) {
        return new Latency(wholeMillis(delay, "delay"), wholeMillis(jitter, "jitter"), direction);
    }

    /** {@code adminUrl} as the admin API's base URL (see {@link AdminHttp#baseUrl}), refused naming the argument. */
    static String adminUrl(String adminUrl) {
        try {
            return AdminHttp.baseUrl(adminUrl);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("adminUrl: " + e.getMessage(), e);
        }
    }

    /**
     * {@code token} as a client sends it: null or empty for none (an empty BLACKPIPE_ADMIN_TOKEN is unset to the proxy
     * too); one no HTTP header can carry is refused, never quoted.
     */
    static String adminToken(String token) {
        String why = AdminToken.whyUnsendable(token);
        if (why != null) {
            throw new IllegalArgumentException("token: " + why);
        }
        return token;
    }

    /** A member's restart: a quiesce of zero or whole milliseconds, a time down of whole milliseconds from 1, up to a day. */
    static Restart restart(Duration quiesce, Duration down) {
        return new Restart(wholeMillis(quiesce, "quiesce"), positiveMillis(down, "down"));
    }

    /** Zero or whole milliseconds up to a day (a latency's delay and jitter, a restart's quiesce). */
    private static long wholeMillis(Duration duration, String what) {
        // the upper bound first: toNanos() throws past some 292 years
        if (duration == null || duration.isNegative() || duration.compareTo(Duration.ofMillis(Latency.MAX_MILLIS)) > 0
                || duration.toNanos() % 1_000_000 != 0) {
            throw new IllegalArgumentException(what + ": must be zero or whole milliseconds up to 24h, got " + duration);
        }
        return duration.toMillis();
    }

    /** One failCommand document: anything after it is an error, not ignored. */
    static BsonDocument failCommand(String json) {
        if (json == null) {
            throw new IllegalArgumentException("rule: a failCommand document is required, got null");
        }
        try {
            return JsonDocuments.parseOne(json);
        } catch (JsonParseException | org.bson.BsonInvalidOperationException e) {
            throw new IllegalArgumentException("not a JSON document: " + e.getMessage(), e);
        }
    }
}
