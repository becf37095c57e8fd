package io.blackpipe.upstream;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The servers a local upstream has started so far, while it starts. They are stopped and its directory deleted when
 * the start fails ({@link #end}) and also when the JVM exits meanwhile (a Ctrl-C, a test fork's timeout): that runs
 * the shutdown hooks but no finally block, and the upstream's own hook is registered only once it is ready.
 */
final class StartingServers {
    private final List<ManagedProcess> started = new CopyOnWriteArrayList<>();
    private final Path tempDir;
    private final Thread hook;
    /** The JVM exits (the hook ran): a server started after that is stopped as it is added. */
    private volatile boolean stopping;

    StartingServers(String hookName, Path tempDir) {
        this.tempDir = tempDir;
        this.hook = ShutdownHooks.register(hookName, this::stopAll);
    }

    ManagedProcess add(ManagedProcess process) {
        started.add(process);
        if (stopping) { // the hook took its list before this one was in it
            process.close();
        }
        return process;
    }

    /** How many have started. */
    int count() {
        return started.size();
    }

    /** Every one started, in order. */
    List<ManagedProcess> all() {
        return List.copyOf(started);
    }

    /** The start is over: when it failed ({@code ready} false), everything started stops and the directory goes. */
    void end(boolean ready) {
        ShutdownHooks.remove(hook);
        if (!ready) {
            stopAll();
        }
    }

    /** What the hook does (and a failed start): every server started stops, and the directory goes. */
    void stopAll() {
        stopping = true;
        started.parallelStream().forEach(ManagedProcess::close);
        FileTrees.deleteQuietly(tempDir);
    }
}
