package io.blackpipe.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.lang.reflect.Field;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty reports a ByteBuf (or other tracked resource) that was garbage
 * collected without being released. Registered for every test class through JUnit's extension
 * autodetection (META-INF/services), so it is loaded before any test touches Netty.
 *
 * <p>A leak is only seen once the garbage collector has collected the buffer, so a leak is
 * blamed on the class during or after which it was collected, which may be a later class.
 */
public final class NettyLeakCheck implements AfterAllCallback {
    private static final RecordingLeakDetectorFactory FACTORY = new RecordingLeakDetectorFactory();
    /** Null when our detector guards ByteBufs, else why it does not. */
    private static final String INSTALL_PROBLEM;

    static {
        // Must run before io.netty.buffer.AbstractByteBuf is initialized: that class creates its
        // detector once, from whatever factory is installed at that moment.
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(FACTORY);
        if (System.getProperty("io.netty.leakDetection.level") == null) {
            // Outside Maven (an IDE run) nobody set the level; paranoid tracks every buffer.
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        }
        INSTALL_PROBLEM = checkByteBufDetector();
    }

    private static String checkByteBufDetector() {
        try {
            Field field = Class.forName("io.netty.buffer.AbstractByteBuf").getDeclaredField("leakDetector");
            field.setAccessible(true);
            Object detector = field.get(null);
            if (detector instanceof RecordingLeakDetectorFactory.RecordingLeakDetector) {
                return null;
            }
            return "Netty's ByteBuf leak detector is " + detector + ", not the recording one: something initialized"
                    + " Netty buffers before NettyLeakCheck was loaded (a static initializer in a test, or JUnit"
                    + " extension autodetection is off), so ByteBuf leaks would go unnoticed.";
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "cannot verify which leak detector Netty's ByteBufs use (" + e + ")";
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (INSTALL_PROBLEM != null) {
            throw new AssertionError(INSTALL_PROBLEM);
        }
        List<String> leaks = detectLeaks();
        if (!leaks.isEmpty()) {
            // Clear them so one leak fails one class, not every class after it.
            forgetLeaks(leaks::contains);
            throw new AssertionError(leaks.size() + " Netty resource leak(s) detected after "
                    + context.getDisplayName() + ":" + System.lineSeparator()
                    + String.join(System.lineSeparator() + System.lineSeparator(), leaks));
        }
    }

    /**
     * Runs the garbage collector and makes every detector look at what it collected, then returns
     * all leak reports recorded so far (including ones recorded earlier and not yet forgotten).
     */
    public static List<String> detectLeaks() {
        for (int round = 0; round < 2; round++) {
            System.gc();
            sleep(100);
            churnBuffers();
            FACTORY.detectors().forEach(RecordingLeakDetectorFactory.RecordingLeakDetector::poll);
        }
        return FACTORY.reports();
    }

    /** Leak reports recorded so far without triggering detection. */
    public static List<String> recordedLeaks() {
        return FACTORY.reports();
    }

    /** Drops recorded reports, for tests that leak on purpose. */
    public static void forgetLeaks(Predicate<String> which) {
        FACTORY.removeReports(which);
    }

    /** Whether buffer leaks are being recorded at all (false if Netty was touched first, see above). */
    public static boolean isActive() {
        return INSTALL_PROBLEM == null && ResourceLeakDetector.isEnabled();
    }

    /** Allocating tracked buffers is how Netty itself polls; we do it from each common allocator. */
    private static void churnBuffers() {
        for (ByteBufAllocator allocator : List.of(PooledByteBufAllocator.DEFAULT, ByteBufAllocator.DEFAULT)) {
            allocator.directBuffer(16).release();
            allocator.heapBuffer(16).release();
        }
        ByteBuf unpooled = Unpooled.directBuffer(16);
        unpooled.release();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
