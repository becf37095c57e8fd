package io.blackpipe.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** --proxy-cpus: the CPU lists it reads, the split it refuses, and a proxy really started on its CPUs. */
class CpuPlacementTest {
    private static SortedSet<Integer> cpus(Integer... cpus) {
        return new TreeSet<>(List.of(cpus));
    }

    @Test
    void readsTasksetLists() {
        assertEquals(cpus(1), CpuPlacement.parseList("1"));
        assertEquals(cpus(0, 1, 2, 3, 6, 8, 9), CpuPlacement.parseList("0-3,6,8-9"));
        assertEquals("0-3,6,8-9", CpuPlacement.format(CpuPlacement.parseList("8-9,0-3,6")));
        for (String bad : List.of("", "a", "3-1", "1-2-3", "-1", "1,,2", "1-")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CpuPlacement.parseList(bad), bad);
            assertTrue(e.getMessage().contains("'" + bad + "' is not a CPU list"), e.getMessage());
        }
    }

    @Test
    void theProxiesGetTheirCpusAndTheHarnessTheRest() {
        CpuPlacement placement = CpuPlacement.split("2-3", cpus(0, 1, 2, 3));
        assertTrue(placement.isSplit());
        assertEquals(List.of("taskset", "-c", "2-3", "haproxy", "-db"), placement.wrap(List.of("haproxy", "-db")));
        assertTrue(placement.describe().contains("on CPU(s) 2-3 (taskset), the harness's JVM (the driver, the in-process upstream) on CPU(s) 0-1"),
                placement.describe());
        assertFalse(CpuPlacement.SHARED.isSplit());
        assertEquals(List.of("haproxy", "-db"), CpuPlacement.SHARED.wrap(List.of("haproxy", "-db")));
    }

    @Test
    void refusesCpusTheProcessMayNotUseOrNoneLeftForTheHarness() {
        IllegalArgumentException notAllowed = assertThrows(IllegalArgumentException.class, () -> CpuPlacement.split("1,4-5", cpus(0, 1)));
        assertEquals("--proxy-cpus 1,4-5 names CPU(s) 4-5 this process may not use (it may use 0-1)", notAllowed.getMessage());
        IllegalArgumentException nothingLeft = assertThrows(IllegalArgumentException.class, () -> CpuPlacement.split("0-1", cpus(0, 1)));
        assertEquals("--proxy-cpus 0-1 leaves no CPU for the driver and the upstream (this process may use 0-1)", nothingLeft.getMessage());
    }

    @Test
    void aProxyStartedThroughTheSplitRunsOnlyOnItsCpus() throws Exception {
        SortedSet<Integer> allowed = CpuPlacement.allowedCpus("self");
        assumeTrue(allowed.size() >= 2, "needs two CPUs to split; this process may use " + CpuPlacement.format(allowed));
        String last = String.valueOf(allowed.last());
        CpuPlacement placement = CpuPlacement.split(last, allowed);

        Process sleeper = new ProcessBuilder(placement.wrap(List.of("sleep", "30"))).start();
        try {
            // taskset execs the command: the pid is the proxy's, and so is what /proc says of it
            SortedSet<Integer> seen = null;
            for (int i = 0; i < 100 && (seen == null || !seen.equals(cpus(allowed.last()))); i++) {
                Thread.sleep(20);
                seen = CpuPlacement.allowedCpus(String.valueOf(sleeper.pid()));
            }
            assertEquals(cpus(allowed.last()), seen);
        } finally {
            sleeper.destroy();
            sleeper.waitFor(5, TimeUnit.SECONDS);
        }
    }
}
