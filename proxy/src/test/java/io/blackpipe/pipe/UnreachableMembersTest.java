package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.testing.LogCapture;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A member that flaps (restarting over and over, a full backlog refusing some dials) gave a warning and a "reachable
 * again" line at each turn: one outage now, its refusals and returns counted, a line a second each. A member refusing
 * long after it was back is a new outage, with its warning.
 */
class UnreachableMembersTest {
    private static final Member MEMBER = new Member(MemberAddress.parse("db1:27017"), MemberAddress.parse("127.0.0.1:40001"),
            MemberAddress.parse("db1:27017"));
    private static final ConnectException REFUSED = new ConnectException("Connection refused");

    private static InetSocketAddress client(int port) {
        return new InetSocketAddress("127.0.0.1", port);
    }

    private static List<String> lines(LogCapture log, String containing) {
        return log.messages().stream().filter(m -> m.contains(containing)).toList();
    }

    @Test
    void aFlappingMemberIsOneOutageItsTurnsCountedALineASecond() throws Exception {
        UnreachableMembers members = new UnreachableMembers(new ProxyLog());
        try (LogCapture log = LogCapture.start()) {
            for (int turn = 0; turn < 10; turn++) {
                members.refused(MEMBER, client(5000 + turn), REFUSED);
                members.reached(MEMBER);
            }
            assertEquals(1, lines(log, "unreachable for client").size(), "one warning: " + log.messages());
            assertEquals(List.of("member db1:27017 reachable again after 1 refused connection over 0.0 s"),
                    lines(log, "reachable again").stream().map(l -> l.replaceAll("over \\d+\\.\\d s", "over 0.0 s")).toList());
            Thread.sleep(1_100);
            members.refused(MEMBER, client(5100), REFUSED);
            members.reached(MEMBER);
            assertEquals(1, lines(log, "unreachable for client").size(), "still the one outage: " + log.messages());
            List<String> still = lines(log, "still unreachable");
            assertEquals(1, still.size(), log.messages()::toString);
            assertEquals(true, still.get(0).contains(": 10 client connections closed so since the last such line, 11 in "), still.get(0));
            List<String> back = lines(log, "reachable again");
            assertEquals(2, back.size(), log.messages()::toString);
            assertEquals(true, back.get(1).contains("reachable again after 11 refused connections over ")
                    && back.get(1).endsWith(" (back 10 times since the last such line: it refuses some dials and answers others)"), back.get(1));
        }
    }

    @Test
    void aMemberRefusingLongAfterItWasBackIsANewOutageWithItsWarning() throws Exception {
        UnreachableMembers members = new UnreachableMembers(new ProxyLog(), TimeUnit.MILLISECONDS.toNanos(200));
        try (LogCapture log = LogCapture.start()) {
            members.refused(MEMBER, client(6000), REFUSED);
            members.reached(MEMBER);
            Thread.sleep(300);
            members.refused(MEMBER, client(6001), REFUSED);
            members.reached(MEMBER);
            assertEquals(List.of("127.0.0.1:6000", "127.0.0.1:6001"), lines(log, "unreachable for client").stream()
                    .map(l -> l.replaceAll(".*unreachable for client (\\S+):.*", "$1")).toList(), log.messages()::toString);
            assertEquals(2, lines(log, "reachable again after 1 refused connection over").size(), log.messages()::toString);
        }
    }

    @Test
    void aMemberThatNeverRefusedSaysNothingWhenReached() throws Exception {
        UnreachableMembers members = new UnreachableMembers(new ProxyLog());
        try (LogCapture log = LogCapture.start()) {
            members.reached(MEMBER);
            members.reached(MEMBER);
            assertEquals(List.of(), lines(log, "db1:27017"));
        }
    }
}
