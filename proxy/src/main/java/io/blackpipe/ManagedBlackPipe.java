package io.blackpipe;

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

    /** Closes the proxy, as {@link BlackPipe#close()} does for one that is not managed. Idempotent. */
    @Override
    public void close() {
        blackPipe.shutDown();
    }
}
