package io.blackpipe.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The harness's flags as bench/run reads them; --proxy-cpus in particular. */
class BenchOptionsTest {
    @Test
    void withoutProxyCpusEveryTargetSharesTheCpusAsBefore() {
        BenchOptions o = BenchOptions.parse(new String[] {"--rounds", "2"});
        assertNull(o.proxyCpus);
        assertEquals(Target.DEFAULT, o.targets);
    }

    @Test
    void proxyCpusRunsTheProxiesThatAreProcessesOfTheirOwn() {
        BenchOptions o = BenchOptions.parse(new String[] {"--proxy-cpus", "1"});
        assertEquals("1", o.proxyCpus);
        assertEquals(List.of(Target.DIRECT, Target.PROCESS, Target.HAPROXY), o.targets);
        BenchOptions chosen = BenchOptions.parse(new String[] {"--targets", "haproxy", "--proxy-cpus", "1"});
        assertEquals(List.of(Target.HAPROXY), chosen.targets);
    }

    @Test
    void proxyCpusRefusesAnInProcessTargetAndABadList() {
        IllegalArgumentException inProcess = assertThrows(IllegalArgumentException.class,
                () -> BenchOptions.parse(new String[] {"--proxy-cpus", "1", "--targets", "blackpipe,haproxy"}));
        assertEquals("--proxy-cpus places only the proxies that run as their own process (direct, blackpipe-process, haproxy); "
                + "target 'blackpipe' runs in the harness's JVM, on its CPUs", inProcess.getMessage());
        IllegalArgumentException badList = assertThrows(IllegalArgumentException.class,
                () -> BenchOptions.parse(new String[] {"--proxy-cpus", "one"}));
        assertEquals("'one' is not a CPU list (such as 1, 2-3 or 0,2): bad part 'one'", badList.getMessage());
    }
}
