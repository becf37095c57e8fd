package io.blackpipe;

import java.util.List;

/**
 * A BlackPipe shared by code that must not close it, and the one handle that does: what a test framework's
 * extension hands its tests ({@code @BlackPipeTest}'s, one proxy per test class). {@link #blackPipe()}'s own
 * {@code close()} is an IllegalStateException saying who closes it, as a test that closed it would break every
 * later test sharing it. Start one with {@link BlackPipeBuilder#startManaged(String)}.
 */
public final class ManagedBlackPipe implements AutoCloseable {
    private final BlackPipe blackPipe;

    ManagedBlackPipe(BlackPipe blackPipe) {
        this.blackPipe = blackPipe;
    }

    /** The proxy to hand out. */
    public BlackPipe blackPipe() {
        return blackPipe;
    }

    /**
     * After a test: the rules in force become {@code kept} (as {@link BlackPipe#rules()} gave them: a class's own, set
     * up before its first test), fresh, and, as at {@link BlackPipe#reset()}, fired counts are zeroed and the ids of
     * rules added without one start over (so that a rule the next test's instance adds as it is made gets the id it
     * gets in a test run alone, and its fired(id) is its own).
     */
    public void giveBackRules(List<String> kept) {
        blackPipe.clearRules();
        blackPipe.server().rules().forgetFired();
        blackPipe.rules.startIdsOver();
        kept.forEach(blackPipe::rule);
    }

    /** Closes the proxy, as {@link BlackPipe#close()} does for one that is not managed. Idempotent. */
    @Override
    public void close() {
        blackPipe.shutDown();
    }
}
