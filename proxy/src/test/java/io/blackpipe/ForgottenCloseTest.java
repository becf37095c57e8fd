package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The proxy's threads are daemon threads, as the MongoDB driver's are: a program (or a test JVM)
 * that forgets to close a BlackPipe still exits when its main thread ends, instead of hanging.
 */
class ForgottenCloseTest {

    @Test
    void aProgramThatNeverClosesTheProxyStillExits(@TempDir Path temp) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process child = new ProcessBuilder(List.of(java, "-cp", classPath, ForgetsToClose.class.getName()))
                .redirectErrorStream(true).redirectOutput(temp.resolve("out.txt").toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        boolean exited = child.waitFor(60, TimeUnit.SECONDS);
        if (!exited) {
            child.destroyForcibly().waitFor();
        }
        String output = Files.readString(temp.resolve("out.txt"));
        assertTrue(exited, "the JVM still runs a minute after main returned: a non-daemon thread keeps it alive\n" + output);
        assertEquals(0, child.exitValue(), output);
        assertTrue(output.contains("main returns, the proxy left open"), output);
        assertTrue(output.contains("through the proxy: {\"ok\": 1.0,"), "the proxy served a command: " + output);
    }
}
