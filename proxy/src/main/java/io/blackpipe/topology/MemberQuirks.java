package io.blackpipe.topology;

/**
 * Where a member refuses what every mongod takes, as jongodb does (HelloProbe finds out at start),
 * so the proxy sends it what it takes instead and the driver sees what a mongod would do.
 *
 * @param primaryReadsOnly a command with a read preference other than primary is refused, hellos
 *                         too (the driver chose the member by it; a one-member set serves it at its
 *                         primary): its read preference is dropped on its way
 * @param refusesUnacknowledged a write concern of w:0 is refused (a fire-and-forget write, which
 *                              mongod applies unanswered): it goes as w:1, and the reply no client
 *                              asked for is dropped
 */
public record MemberQuirks(boolean primaryReadsOnly, boolean refusesUnacknowledged) {
    public static final MemberQuirks NONE = new MemberQuirks(false, false);

    public boolean any() {
        return primaryReadsOnly || refusesUnacknowledged;
    }
}
