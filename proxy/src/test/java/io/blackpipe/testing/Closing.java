package io.blackpipe.testing;

/** What a test's {@code @AfterEach} closes: each part in the order given, those it never opened (null) skipped. */
public final class Closing {
    private Closing() {
    }

    /** Closes every part, even after one failed to close; the first failure is thrown, with the others suppressed in it. */
    public static void inTurn(AutoCloseable... parts) throws Exception {
        Exception first = null;
        for (AutoCloseable part : parts) {
            try {
                if (part != null) {
                    part.close();
                }
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
