package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A member that flaps (refusing some dials, answering others) gave a warning and a "reachable again" line at every
 * turn: one outage now, a warning, its first return at once, then its turns counted a line a second, the line held back
 * said when its second is up, so the latest line is true without another dial. A refusal long after the member was back
 * is a new outage. On a clock moved by hand, and a storm from two threads on the real one.
 */
class UnreachableMembersTest {
    private static final Member MEMBER = new Member(MemberAddress.parse("db1:27017"), MemberAddress.parse("127.0.0.1:40001"),
            MemberAddress.parse("127.0.0.1:40001"));
    private static final ConnectException REFUSED = new ConnectException("Connection refused");
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    /** A clock that moves only when told, running the flushes it makes due at their time, in order. */
    private static final class HandClock implements UnreachableMembers.Later {
        private record Due(long atNanos, Runnable flush) {
        }

        long now = 5 * SECOND;
        private final List<Due> pending = new ArrayList<>();

        @Override
        public void run(Runnable flush, long delayNanos) {
            pending.add(new Due(now + delayNanos, flush));
        }

        void advanceMillis(long millis) {
            long to = now + TimeUnit.MILLISECONDS.toNanos(millis);
            while (true) {
                Due next = pending.stream().filter(d -> d.atNanos() <= to).min(Comparator.comparingLong(Due::atNanos)).orElse(null);
                if (next == null) {
                    break;
                }
                pending.remove(next);
                now = Math.max(now, next.atNanos());
                next.flush().run();
            }
            now = to;
        }

        UnreachableMembers members() {
            return new UnreachableMembers(new ProxyLog(), () -> now, this, SECOND, UnreachableMembers.NEW_OUTAGE_AFTER_NANOS);
        }
    }

    private static InetSocketAddress client(int port) {
        return new InetSocketAddress("127.0.0.1", port);
    }

    /** The lines about MEMBER, by either of its names. */
    private static List<String> lines(LogCapture log) {
        return log.messages().stream().filter(m -> m.contains("db1:27017") || m.contains("127.0.0.1:40001")).toList();
    }

    private static List<String> warnings(LogCapture log) {
        return log.messagesAt(Level.WARNING).stream().filter(m -> m.contains("unreachable for client")).toList();
    }

    private static String last(List<String> lines) {
        return lines.get(lines.size() - 1);
    }

    /** {@code turns} times: a refusal, 10 ms, a return, 10 ms. */
    private static void flap(UnreachableMembers members, HandClock clock, int turns) {
        for (int turn = 0; turn < turns; turn++) {
            members.refused(MEMBER, client(5000 + turn), REFUSED);
            clock.advanceMillis(10);
            members.reached(MEMBER);
            clock.advanceMillis(10);
        }
    }

    @Test
    void aFlappingMemberIsOneWarningItsFirstReturnThenItsTurnsCountedALineASecond() throws Exception {
        HandClock clock = new HandClock();
        UnreachableMembers members = clock.members();
        try (LogCapture log = LogCapture.start()) {
            flap(members, clock, 10);
            assertEquals(List.of("upstream 127.0.0.1:40001 unreachable for client 127.0.0.1:5000: Connection refused (its clients'"
                    + " connections close at once until it answers; the next failed dials, and its returns if it flaps, are counted,"
                    + " a line a second)", "member db1:27017 reachable again after 1 refused connection over 0.0 s"), lines(log));

            clock.advanceMillis(1_000); // no dial: the held-back turns are said when their second is up
            assertEquals("member db1:27017 reachable again, flapping: back 9 times and 9 client connections refused since its last"
                    + " line; 10 returns and 10 refused connections in 1.0 s (it refuses some dials and answers others)", last(lines(log)));

            flap(members, clock, 150); // 3 s more
            clock.advanceMillis(1_000);
            List<String> lines = lines(log);
            assertEquals(1, warnings(log).size(), "one outage, one warning: " + lines);
            assertTrue(lines.size() <= 2 + 5, "a line a second after the first two: " + lines);
            assertTrue(lines.stream().skip(2).allMatch(l -> l.contains(", flapping: back ")), lines::toString);
            assertTrue(last(lines).endsWith("160 returns and 160 refused connections in 5.0 s (it refuses some dials and answers others)"),
                    last(lines));
        }
    }

    @Test
    void aMemberDownForGoodAfterFlappingIsSaidDownWithinASecondWithNoOtherDial() throws Exception {
        HandClock clock = new HandClock();
        UnreachableMembers members = clock.members();
        try (LogCapture log = LogCapture.start()) {
            flap(members, clock, 3);
            members.refused(MEMBER, client(6000), REFUSED); // down, and no client dials again
            assertTrue(last(lines(log)).startsWith("member db1:27017 reachable again"), lines(log)::toString);

            clock.advanceMillis(1_000);
            List<String> lines = lines(log);
            assertEquals("upstream 127.0.0.1:40001 unreachable, flapping: back 2 times and 3 client connections refused since its last"
                    + " line; 3 returns and 4 refused connections in 1.0 s (the last refused for client 127.0.0.1:6000: Connection"
                    + " refused)", last(lines), lines::toString);
            clock.advanceMillis(30_000);
            assertEquals(lines, lines(log), "nothing more to say");
            assertEquals(1, warnings(log).size(), lines::toString);
        }
    }

    @Test
    void aMemberUpForGoodAfterFlappingIsSaidUpWithinASecondWithNoOtherDial() throws Exception {
        HandClock clock = new HandClock();
        UnreachableMembers members = clock.members();
        try (LogCapture log = LogCapture.start()) {
            flap(members, clock, 3);
            clock.advanceMillis(2_000);
            members.refused(MEMBER, client(6000), REFUSED);
            clock.advanceMillis(100);
            members.reached(MEMBER); // up, and stays up
            members.reached(MEMBER); // a dial on another loop: nothing more to say
            clock.advanceMillis(100);
            members.refused(MEMBER, client(6001), REFUSED);
            clock.advanceMillis(100);
            members.reached(MEMBER);
            assertTrue(last(lines(log)).startsWith("upstream 127.0.0.1:40001 unreachable, flapping: back 0 times and 1 client"
                    + " connection refused since its last line"), "said at once, over a second after the last line: " + lines(log));

            clock.advanceMillis(1_000);
            List<String> lines = lines(log);
            assertEquals("member db1:27017 reachable again, flapping: back 2 times and 1 client connection refused since its last line;"
                    + " 5 returns and 5 refused connections in 3.1 s (it refuses some dials and answers others)", last(lines), lines::toString);
            clock.advanceMillis(30_000);
            assertEquals(lines, lines(log), "nothing more to say");
        }
    }

    @Test
    void aPlainOutageIsAWarningItsCountsWhenTheirSecondIsUpAndItsReturnAtOnce() throws Exception {
        HandClock clock = new HandClock();
        UnreachableMembers members = clock.members();
        try (LogCapture log = LogCapture.start()) {
            for (int i = 0; i < 5; i++) {
                members.refused(MEMBER, client(7000 + i), REFUSED);
                clock.advanceMillis(100);
            }
            assertEquals(1, lines(log).size(), lines(log)::toString);
            clock.advanceMillis(600); // the refusals held back are said at 1 s, with no other dial
            assertEquals("upstream 127.0.0.1:40001 still unreachable: 4 client connections closed so since the last such line, 5 in"
                    + " 1.0 s (the last for client 127.0.0.1:7004: Connection refused)", last(lines(log)));

            clock.advanceMillis(100);
            members.refused(MEMBER, client(7005), REFUSED);
            clock.advanceMillis(100);
            members.reached(MEMBER);
            assertEquals("member db1:27017 reachable again after 6 refused connections over 1.3 s", last(lines(log)), "at once");
            clock.advanceMillis(30_000);
            assertEquals(3, lines(log).size(), "its held-back refusal was in the return's count: " + lines(log));
        }
    }

    @Test
    void aRefusalSoonAfterTheReturnGoesOnInTheOutageOneLongAfterIsANewOneWithItsWarning() throws Exception {
        HandClock clock = new HandClock();
        UnreachableMembers members = clock.members();
        try (LogCapture log = LogCapture.start()) {
            members.refused(MEMBER, client(8000), REFUSED);
            members.reached(MEMBER);
            clock.advanceMillis(9_000); // back for 9 s: within the 10 s, the same outage
            members.refused(MEMBER, client(8001), REFUSED);
            assertEquals(1, warnings(log).size(), lines(log)::toString);
            members.reached(MEMBER);
            clock.advanceMillis(1_000);
            assertTrue(last(lines(log)).startsWith("member db1:27017 reachable again, flapping: back 1 time"), lines(log)::toString);

            clock.advanceMillis(10_500); // back for over 10 s: over
            members.refused(MEMBER, client(8002), REFUSED);
            assertEquals(2, warnings(log).size(), lines(log)::toString);
            assertTrue(last(warnings(log)).contains("unreachable for client 127.0.0.1:8002"), lines(log)::toString);
            members.reached(MEMBER);
            assertEquals("member db1:27017 reachable again after 1 refused connection over 0.0 s", last(lines(log)),
                    "a new outage's counts, and its return at once");
        }
    }

    @Test
    void aMemberThatNeverRefusedSaysNothingWhenReached() throws Exception {
        HandClock clock = new HandClock();
        UnreachableMembers members = clock.members();
        try (LogCapture log = LogCapture.start()) {
            members.reached(MEMBER);
            members.reached(MEMBER);
            clock.advanceMillis(2_000);
            assertEquals(List.of(), lines(log));
        }
    }

    private static final Pattern STILL = Pattern.compile(".* still unreachable: (\\d+) client connections? closed so since the last"
            + " such line, (\\d+) in .*");
    private static final Pattern BACK = Pattern.compile("member db1:27017 reachable again after (\\d+) refused connections? over .*");
    private static final Pattern FLAPPING = Pattern.compile(".*, flapping: back (\\d+) times? and (\\d+) client connections? refused"
            + " since its last line; (\\d+) returns? and (\\d+) refused connections? in .*");

    /**
     * Two loops' dials of one member, one refused after another, the other answered after another, with flushes on a
     * third thread: each line's counts since the last line add up to the totals it says, and the last line to every
     * refusal made, with the member up as the last return left it. Five storms, as one may miss a race.
     */
    @Test
    void aStormOfRefusalsAndReturnsFromTwoThreadsAddsUp() throws Exception {
        ScheduledExecutorService flushes = Executors.newSingleThreadScheduledExecutor();
        try {
            for (int storm = 0; storm < 5; storm++) {
                stormAddsUp(new UnreachableMembers(new ProxyLog(), System::nanoTime, UnreachableMembers.Later.on(flushes),
                        TimeUnit.MILLISECONDS.toNanos(5), UnreachableMembers.NEW_OUTAGE_AFTER_NANOS), 20_000);
            }
        } finally {
            flushes.shutdownNow();
        }
    }

    private static void stormAddsUp(UnreachableMembers members, int each) throws Exception {
        try (LogCapture log = LogCapture.start()) {
            CyclicBarrier start = new CyclicBarrier(2);
            Thread refusing = new Thread(() -> {
                await(start);
                for (int i = 0; i < each; i++) {
                    members.refused(MEMBER, client(9000), REFUSED);
                }
            });
            Thread reaching = new Thread(() -> {
                await(start);
                for (int i = 0; i < each; i++) {
                    members.reached(MEMBER);
                }
            });
            refusing.start();
            reaching.start();
            refusing.join();
            reaching.join();
            members.reached(MEMBER); // up for good
            Await.until(Duration.ofSeconds(10), () -> "the last line up with every refusal: " + lines(log), () -> {
                String last = last(lines(log));
                return last.startsWith("member db1:27017 reachable again") && last.contains(" " + each + " refused connections");
            });
            Thread.sleep(50);

            List<String> lines = lines(log);
            assertEquals(1, warnings(log).size(), lines::toString);
            assertTrue(lines.get(0).contains("unreachable for client"), lines::toString);
            long refusedSaid = 1;
            long returnsSaid = 0;
            for (String line : lines.subList(1, lines.size())) {
                Matcher still = STILL.matcher(line);
                Matcher back = BACK.matcher(line);
                Matcher flapping = FLAPPING.matcher(line);
                if (still.matches()) {
                    assertEquals(0, returnsSaid, line);
                    refusedSaid += Long.parseLong(still.group(1));
                    assertEquals(refusedSaid, Long.parseLong(still.group(2)), line);
                } else if (back.matches()) {
                    assertEquals(0, returnsSaid, "the first return alone is said so: " + line);
                    returnsSaid = 1;
                    assertTrue(Long.parseLong(back.group(1)) >= refusedSaid, line);
                    refusedSaid = Long.parseLong(back.group(1));
                } else {
                    assertTrue(flapping.matches(), line);
                    returnsSaid += Long.parseLong(flapping.group(1));
                    refusedSaid += Long.parseLong(flapping.group(2));
                    assertEquals(returnsSaid, Long.parseLong(flapping.group(3)), line);
                    assertEquals(refusedSaid, Long.parseLong(flapping.group(4)), line);
                }
            }
            assertEquals(each, refusedSaid, "every refusal counted once");
            assertTrue(returnsSaid >= 1 && returnsSaid <= refusedSaid, "a return only after a refusal: " + returnsSaid);
        }
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
