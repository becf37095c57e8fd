package io.blackpipe.observe;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.util.TimeUtils;
import io.prometheus.metrics.model.registry.MetricType;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.Exemplars;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricFamilyDescriptor;
import io.prometheus.metrics.model.snapshots.MetricMetadata;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * blackpipe_command_duration_seconds (and its _max gauge): one {@link DurationHistogram} per
 * (command, member), exported with the names, labels, help text and buckets the Micrometer Timer
 * had, so the scrape reads as before.
 */
final class CommandDurations implements MultiCollector {
    static final String NAME = "blackpipe_command_duration_seconds";
    private static final String HELP = "Round trip of commands the upstream answered, from their arrival to their last reply, a rule delay included";
    private static final List<String> LABELS = List.of("command", "member");
    private static final double[] BOUNDS_SECONDS = boundsSeconds();

    private final Clock clock;
    private final Map<Labels, DurationHistogram> histograms = new ConcurrentHashMap<>();

    CommandDurations(Clock clock) {
        this.clock = clock;
    }

    DurationHistogram histogram(String command, String member) {
        return histograms.computeIfAbsent(Labels.of(LABELS, List.of(command, member)), k -> new DurationHistogram(clock));
    }

    @Override
    public MetricSnapshots collect() {
        List<HistogramDataPointSnapshot> points = new ArrayList<>();
        List<GaugeDataPointSnapshot> maxima = new ArrayList<>();
        histograms.forEach((labels, h) -> {
            points.add(new HistogramDataPointSnapshot(ClassicHistogramBuckets.of(BOUNDS_SECONDS, h.counts()),
                    h.totalSeconds(), labels, Exemplars.EMPTY, h.createdMillis()));
            maxima.add(new GaugeDataPointSnapshot(h.maxSeconds(), labels, null));
        });
        return new MetricSnapshots(new HistogramSnapshot(new MetricMetadata(NAME, HELP, null), points),
                new GaugeSnapshot(new MetricMetadata(NAME + "_max", HELP, null), maxima));
    }

    /** Declared so the registry refuses another meter by these names, as it would for Micrometer's own. */
    @Override
    public List<MetricFamilyDescriptor> getMetricFamilyDescriptors() {
        return List.of(MetricFamilyDescriptor.of(MetricType.HISTOGRAM, NAME).help(HELP).labelNames(LABELS).build(),
                MetricFamilyDescriptor.of(MetricType.GAUGE, NAME + "_max").help(HELP).labelNames(LABELS).build());
    }

    private static double[] boundsSeconds() {
        double[] seconds = new double[DurationHistogram.BOUNDS.length + 1];
        for (int i = 0; i < DurationHistogram.BOUNDS.length; i++) {
            seconds[i] = TimeUtils.nanosToUnit(DurationHistogram.BOUNDS[i], TimeUnit.SECONDS); // as Micrometer converts them
        }
        seconds[seconds.length - 1] = Double.POSITIVE_INFINITY;
        return seconds;
    }
}
