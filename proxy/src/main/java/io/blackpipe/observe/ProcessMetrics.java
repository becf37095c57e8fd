package io.blackpipe.observe;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;

/**
 * The proxy process's own gauges on /metrics, for the CLI's proxy (a sidecar's operator watches it like any JVM): heap
 * and direct buffer memory (jvm_memory_*, jvm_buffer_*: large messages are held in direct memory), threads, garbage
 * collection, CPU, open file descriptors (process_files_*: two per client connection) and uptime. Not for the
 * in-process API, whose registry holds the test's proxy alone in a JVM that is the test's.
 */
public final class ProcessMetrics implements AutoCloseable {
    private final JvmGcMetrics gc = new JvmGcMetrics();

    private ProcessMetrics() {
    }

    public static ProcessMetrics bindTo(MeterRegistry registry) {
        ProcessMetrics metrics = new ProcessMetrics();
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        metrics.gc.bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        return metrics;
    }

    /** Stops listening for collections (JvmGcMetrics keeps a listener on each collector until closed). */
    @Override
    public void close() {
        gc.close();
    }
}
