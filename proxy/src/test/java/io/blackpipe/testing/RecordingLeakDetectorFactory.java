package io.blackpipe.testing;

import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import io.netty.util.ResourceLeakTracker;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Makes every Netty leak detector one that also records its reports, so a test run can fail on a
 * leak instead of only logging it. Installed by {@link NettyLeakCheck}.
 */
final class RecordingLeakDetectorFactory extends ResourceLeakDetectorFactory {
    private final List<String> reports = new CopyOnWriteArrayList<>();
    private final List<RecordingLeakDetector<?>> detectors = new CopyOnWriteArrayList<>();

    @Override
    @SuppressWarnings("deprecation") // the abstract factory method Netty calls; maxActive is unused by Netty itself
    public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval, long maxActive) {
        RecordingLeakDetector<T> detector = new RecordingLeakDetector<>(resource, samplingInterval, reports);
        detectors.add(detector);
        return detector;
    }

    /** Reports recorded so far, oldest first. */
    List<String> reports() {
        return List.copyOf(reports);
    }

    List<RecordingLeakDetector<?>> detectors() {
        return detectors;
    }

    void removeReports(java.util.function.Predicate<String> which) {
        reports.removeIf(which);
    }

    /** A stock detector (same sampling, same logging) that also keeps each report it makes. */
    static final class RecordingLeakDetector<T> extends ResourceLeakDetector<T> {
        private final String resourceName;
        private final List<String> sink;

        RecordingLeakDetector(Class<T> resource, int samplingInterval, List<String> sink) {
            super(resource, samplingInterval);
            this.resourceName = resource.getSimpleName();
            this.sink = sink;
        }

        /** Report even when Netty's logger has errors switched off; recording must not depend on logging. */
        @Override
        protected boolean needReport() {
            return true;
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            sink.add("LEAK: " + resourceType + ".release() was not called before it was garbage-collected." + records);
            super.reportTracedLeak(resourceType, records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            sink.add("LEAK: " + resourceType + ".release() was not called before it was garbage-collected"
                    + " (no access records: run with -Dio.netty.leakDetection.level=paranoid to see where it was created).");
            super.reportUntracedLeak(resourceType);
        }

        /**
         * Makes the detector drain its queue of collected-but-unreleased objects now. Netty only
         * does that when it tracks a new object, so we track (and at once close) a throw-away one;
         * trackForcibly ignores sampling, so this works at every level but DISABLED.
         */
        @SuppressWarnings("unchecked")
        void poll() {
            Object probe = new Object();
            ResourceLeakTracker<T> tracker = trackForcibly((T) probe);
            if (tracker != null) {
                tracker.close((T) probe);
            }
        }

        @Override
        public String toString() {
            return "RecordingLeakDetector[" + resourceName + "]";
        }
    }
}
