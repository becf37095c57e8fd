package io.blackpipe.upstream;

/**
 * Safety net so that a JVM which forgets to close a local upstream does not leave servers
 * running; close() removes the hook again so hooks do not pile up in long-lived JVMs.
 */
final class ShutdownHooks {
    private ShutdownHooks() {
    }

    static Thread register(String name, Runnable action) {
        Thread hook = new Thread(action, name);
        Runtime.getRuntime().addShutdownHook(hook);
        return hook;
    }

    static void remove(Thread hook) {
        if (hook == null || hook == Thread.currentThread()) {
            return;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // The JVM is already exiting and running hooks; nothing to unregister.
        }
    }
}
