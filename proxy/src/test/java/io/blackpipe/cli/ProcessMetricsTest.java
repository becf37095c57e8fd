package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.BlackPipe;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A sidecar's operator watches the proxy's memory, threads and file descriptors as any JVM's: /metrics had none of
 * them (a fuzzer watched ps and jcmd instead). The CLI's proxy serves them; the in-process API's registry does not.
 */
class ProcessMetricsTest {
    private static final List<String> GAUGES = List.of("jvm_memory_used_bytes{", "jvm_buffer_memory_used_bytes{id=\"direct\"",
            "jvm_threads_live_threads ", "process_cpu_usage ", "process_files_open_files ", "process_files_max_files ",
            "process_uptime_seconds ");

    @Test
    void theClisProxyServesTheProcesssGaugesAndTheInProcessApiDoesNot() {
        try (RunningProxy running = RunningProxy.start(ProxyConfig.embedded(UpstreamLane.uri()), null)) {
            String scrape = running.proxy.registry().scrape();
            for (String gauge : GAUGES) {
                assertTrue(scrape.lines().anyMatch(line -> line.startsWith(gauge)), () -> gauge + " in: " + scrape);
            }
            assertTrue(scrape.contains("# TYPE jvm_gc_pause_seconds") || scrape.contains("# TYPE jvm_gc_"), "the collector's");
        }
        try (BlackPipe embedded = BlackPipe.start(UpstreamLane.uri())) {
            assertTrue(embedded.registry().find("jvm.memory.used").meters().isEmpty(), "the test's JVM is not the proxy's");
            assertTrue(embedded.registry().find("process.files.open").meters().isEmpty());
        }
    }
}
