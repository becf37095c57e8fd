package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BandwidthTest {
    @Test
    void aRateIsReadInTheUnitsPeopleWriteThousandsAndPowersOfTwoApart() {
        assertEquals(500, Bandwidth.parse("500").bytesPerSecond(), "a plain number: bytes a second");
        assertEquals(500, Bandwidth.parse("500B/s").bytesPerSecond());
        assertEquals(64_000, Bandwidth.parse("64KB/s").bytesPerSecond());
        assertEquals(64_000, Bandwidth.parse("64kb/s").bytesPerSecond(), "case aside");
        assertEquals(65_536, Bandwidth.parse("64KiB/s").bytesPerSecond());
        assertEquals(65_536, Bandwidth.parse(" 64 KiB ").bytesPerSecond(), "spaces and /s may go");
        assertEquals(1_500_000, Bandwidth.parse("1.5MB/s").bytesPerSecond());
        assertEquals(1_048_576, Bandwidth.parse("1MiB/s").bytesPerSecond());
        assertEquals(1L << 30, Bandwidth.parse("1GiB/s").bytesPerSecond(), "the most");
        assertEquals(1_000_000_000, Bandwidth.parse("1GB/s").bytesPerSecond());
        assertEquals(1, Bandwidth.parse("1B/s").bytesPerSecond(), "the least");
    }

    @Test
    void aRateThatIsNoneOrOutOfRangeIsRefusedSayingWhy() {
        String forms = "is not a rate such as 64KiB/s, 1MB/s or 500B/s (B, KB = 1000 B, KiB = 1024 B, MB, MiB, GB, GiB)";
        for (String bad : new String[] {"fast", "", "-5", "1e3", "0x10", "5 kbit/s", "64K", "64KiB/m", "1,000"}) {
            assertEquals("'" + bad + "' " + forms, assertThrows(IllegalArgumentException.class, () -> Bandwidth.parse(bad)).getMessage());
        }
        assertEquals("'null' " + forms, assertThrows(IllegalArgumentException.class, () -> Bandwidth.parse(null)).getMessage());
        assertEquals("'0' is not from 1B/s to 1GiB/s", assertThrows(IllegalArgumentException.class, () -> Bandwidth.parse("0")).getMessage());
        assertEquals("'0.5' is not from 1B/s to 1GiB/s", assertThrows(IllegalArgumentException.class, () -> Bandwidth.parse("0.5")).getMessage());
        assertEquals("'2GiB/s' is not from 1B/s to 1GiB/s", assertThrows(IllegalArgumentException.class, () -> Bandwidth.parse("2GiB/s")).getMessage());
        assertEquals("'99999999999999999999GB' is not from 1B/s to 1GiB/s",
                assertThrows(IllegalArgumentException.class, () -> Bandwidth.parse("99999999999999999999GB")).getMessage());
        assertEquals("'1.5' is not a whole number of bytes a second",
                assertThrows(IllegalArgumentException.class, () -> Bandwidth.parse("1.5")).getMessage());
        assertEquals("rate: must be from 1B/s to 1GiB/s, got -1B/s", assertThrows(IllegalArgumentException.class, () -> new Bandwidth(-1)).getMessage());
    }

    @Test
    void itNarrowsEachWayUnlessToldWhichWay() {
        Bandwidth eachWay = new Bandwidth(65_536);
        assertEquals(Direction.BOTH, eachWay.direction());
        assertTrue(eachWay.narrowsReplies() && eachWay.narrowsRequests());
        assertEquals(eachWay, Bandwidth.parse("64KiB/s"), "a rate read alone narrows each way");
        Bandwidth replies = eachWay.towards(Direction.REPLIES);
        assertTrue(replies.narrowsReplies() && !replies.narrowsRequests());
        Bandwidth requests = eachWay.towards(Direction.REQUESTS);
        assertTrue(!requests.narrowsReplies() && requests.narrowsRequests());
        assertEquals(65_536, requests.bytesPerSecond());
        assertEquals("64 KiB/s each way", eachWay.describeAndWay());
        assertEquals("64 KiB/s towards the clients", replies.describeAndWay());
        assertEquals("64 KiB/s towards the member", requests.describeAndWay());
        assertEquals(Direction.REPLIES, Direction.parse(" Replies "), "case and spaces aside");
        assertEquals("requests", Direction.REQUESTS.label());
        assertEquals("", Bandwidth.DEFAULT_DIRECTION.parameterUnless(Bandwidth.DEFAULT_DIRECTION), "the default is asked without one");
        assertEquals("&direction=replies", Direction.REPLIES.parameterUnless(Bandwidth.DEFAULT_DIRECTION));
        assertEquals(Direction.REPLIES, Latency.DEFAULT_DIRECTION, "a latency delays replies unless told");
        for (String bad : new String[] {"downstream", "", "each"}) {
            assertEquals("direction: must be both, replies or requests, got '" + bad + "'",
                    assertThrows(IllegalArgumentException.class, () -> Direction.parse(bad)).getMessage());
        }
        assertEquals("direction: must be both, replies or requests, got null",
                assertThrows(IllegalArgumentException.class, () -> new Bandwidth(1, null)).getMessage());
    }

    @Test
    void itIsShownInTheLargestUnitThatDividesIt() {
        assertEquals("64 KiB/s", new Bandwidth(65_536).describe());
        assertEquals("2 MiB/s", new Bandwidth(2 * 1_048_576).describe());
        assertEquals("1 GiB/s", new Bandwidth(1L << 30).describe());
        assertEquals("64 KB/s", new Bandwidth(64_000).describe());
        assertEquals("3 MB/s", new Bandwidth(3_000_000).describe());
        assertEquals("1500 B/s", new Bandwidth(1_500).describe());
        for (long rate : new long[] {1, 999, 1_000, 1_024, 65_536, 64_000, 1_500_000, 1L << 30}) {
            Bandwidth bandwidth = new Bandwidth(rate);
            assertEquals(bandwidth, Bandwidth.parse(bandwidth.describe()), "what it shows reads back: " + bandwidth.describe());
        }
    }

    @Test
    void aPieceIsAHundredthOfASecondsWorthAndCarryingTakesBytesOverRate() {
        assertEquals(1, new Bandwidth(50).pieceBytes(), "at least a byte");
        assertEquals(30, new Bandwidth(3_000).pieceBytes());
        assertEquals(64 * 1024, new Bandwidth(1L << 30).pieceBytes(), "at most 64 KiB");
        assertEquals(30, new Bandwidth(3_000).pieceBytes(122_880), "a write the link carries in 41 s: pieces as usual");
        assertEquals(31, new Bandwidth(3_000).pieceBytes(122_881), "past that, at most 4,096 pieces");
        assertEquals(4_096, new Bandwidth(1024).pieceBytes(16 * 1024 * 1024), "16 MB at 1 KiB/s");
        assertEquals(11_719, new Bandwidth(1).pieceBytes(48_000_000), "the largest message at 1 B/s");
        assertEquals(64 * 1024, new Bandwidth(1).pieceBytes(300_000_000), "never over 64 KiB");
        assertEquals(1_000_000_000L, new Bandwidth(3_000).nanosFor(3_000));
        assertEquals(48L * 1024 * 1024 * 1_000_000_000L / 100, new Bandwidth(100).nanosFor(48L * 1024 * 1024), "no overflow for the largest message");
    }
}
