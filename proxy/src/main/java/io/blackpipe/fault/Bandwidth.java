package io.blackpipe.fault;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A narrow link between a member and its clients (Toxiproxy's bandwidth toxic, for every connection of a member):
 * each connection carries at most {@code bytesPerSecond} in the {@link Direction} it narrows (each way unless told), so
 * a large reply (or request) arrives spread over time, in pieces a hundredth of a second's worth each, as over a
 * narrow network.
 */
public record Bandwidth(long bytesPerSecond, Direction direction) {
    /** Unless told otherwise, a link is narrow each way. */
    public static final Direction DEFAULT_DIRECTION = Direction.BOTH;
    /** A gibibyte a second: a faster link slows nothing a test could see. */
    public static final long MAX_BYTES_PER_SECOND = 1L << 30;
    /** How often a narrow link hands the client a piece: often enough that no piece waits long, seldom enough to be cheap. */
    public static final long PIECES_PER_SECOND = 100;
    /** The largest piece: what a socket takes in one write at most, about. */
    public static final int MAX_PIECE_BYTES = 64 * 1024;
    /** The most pieces one write is cut into ({@link #pieceBytes(int)}). */
    public static final int MAX_PIECES_PER_WRITE = 4096;

    private static final Pattern RATE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(b|kb|kib|mb|mib|gb|gib)?(?:/s)?");
    private static final String FORMS = "a rate such as 64KiB/s, 1MB/s or 500B/s (B, KB = 1000 B, KiB = 1024 B, MB, MiB, GB, GiB)";

    public Bandwidth {
        if (bytesPerSecond < 1 || bytesPerSecond > MAX_BYTES_PER_SECOND) {
            throw new IllegalArgumentException("rate: must be from 1B/s to 1GiB/s, got " + bytesPerSecond + "B/s");
        }
        if (direction == null) {
            throw new IllegalArgumentException("direction: must be both, replies or requests, got null");
        }
    }

    /** A link {@code bytesPerSecond} wide each way. */
    public Bandwidth(long bytesPerSecond) {
        this(bytesPerSecond, DEFAULT_DIRECTION);
    }

    /** This rate in {@code direction}. */
    public Bandwidth towards(Direction direction) {
        return new Bandwidth(bytesPerSecond, direction);
    }

    /** Whether it narrows what the member sends its clients. */
    public boolean narrowsReplies() {
        return direction.towardsClients();
    }

    /** Whether it narrows what the clients send the member. */
    public boolean narrowsRequests() {
        return direction.towardsMember();
    }

    /**
     * "64KiB/s", "1MB/s", "500B/s", "500" (bytes a second): KB, MB and GB count in thousands, KiB, MiB and GiB in
     * 1024s, case aside; "/s" may be left out. The link it describes is narrow each way.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static Bandwidth parse(String written) {
        Matcher rate = written == null ? null : RATE.matcher(written.strip().toLowerCase(Locale.ROOT));
        if (rate == null || !rate.matches()) {
            throw new IllegalArgumentException("'" + written + "' is not " + FORMS);
        }
        BigDecimal bytes = new BigDecimal(rate.group(1)).multiply(BigDecimal.valueOf(unitBytes(rate.group(2))));
        if (bytes.compareTo(BigDecimal.ONE) < 0 || bytes.compareTo(BigDecimal.valueOf(MAX_BYTES_PER_SECOND)) > 0) {
            throw new IllegalArgumentException("'" + written + "' is not from 1B/s to 1GiB/s");
        }
        if (bytes.stripTrailingZeros().scale() > 0) {
            throw new IllegalArgumentException("'" + written + "' is not a whole number of bytes a second");
        }
        return new Bandwidth(bytes.longValueExact());
    }

    private static long unitBytes(String unit) {
        if (unit == null) {
            return 1;
        }
        return switch (unit) {
            case "kb" -> 1000L;
            case "kib" -> 1024L;
            case "mb" -> 1000_000L;
            case "mib" -> 1024L * 1024;
            case "gb" -> 1000_000_000L;
            case "gib" -> 1024L * 1024 * 1024;
            default -> 1; // "b"
        };
    }

    /** The bytes of each piece: a hundredth of a second's worth, 1 at least. */
    public int pieceBytes() {
        return (int) Math.max(1, Math.min(MAX_PIECE_BYTES, bytesPerSecond / PIECES_PER_SECOND));
    }

    /**
     * The bytes of each piece of a write of {@code total} bytes: {@link #pieceBytes()}, or larger where that would cut
     * it into more than {@link #MAX_PIECES_PER_WRITE} (each piece is held until it goes: a 16 MB reply at 1 KiB/s was
     * 1.6 million of them, hundreds of MB). Only a write that takes the link over {@value #MAX_PIECES_PER_WRITE} hundredths
     * of a second, some 41 s, comes in coarser pieces.
     */
    public int pieceBytes(int total) {
        return Math.max(pieceBytes(), (int) Math.min(MAX_PIECE_BYTES, (total + MAX_PIECES_PER_WRITE - 1L) / MAX_PIECES_PER_WRITE));
    }

    /** How long the link takes to carry {@code bytes} (one write's, at most 48 MB: no overflow), in nanoseconds. */
    public long nanosFor(long bytes) {
        return bytes * 1_000_000_000L / bytesPerSecond;
    }

    /** "64 KiB/s each way", "1 MB/s towards the clients": the rate and the way it narrows, for logs and status lines. */
    public String describeAndWay() {
        return describe() + " " + direction.way();
    }

    /** "64 KiB/s", "2 MB/s", "1500 B/s": the rate in the largest unit that divides it, for logs and status lines (ASCII). */
    public String describe() {
        if (bytesPerSecond % (1024L * 1024 * 1024) == 0) {
            return bytesPerSecond / (1024L * 1024 * 1024) + " GiB/s";
        }
        if (bytesPerSecond % (1024L * 1024) == 0) {
            return bytesPerSecond / (1024L * 1024) + " MiB/s";
        }
        if (bytesPerSecond % 1024 == 0) {
            return bytesPerSecond / 1024 + " KiB/s";
        }
        if (bytesPerSecond % 1000_000 == 0) {
            return bytesPerSecond / 1000_000 + " MB/s";
        }
        if (bytesPerSecond % 1000 == 0) {
            return bytesPerSecond / 1000 + " KB/s";
        }
        return bytesPerSecond + " B/s";
    }
}
