package io.blackpipe;

/**
 * The connection-level faults of {@link FailRule#with(Fault)}. Each sets one failCommand data field
 * to true, and is counted under that name: {@code faultsInjected(Fault.RESET)} reads
 * blackpipe_faults_injected_total{fault="resetConnection"}.
 */
public enum Fault {
    /** A TCP reset before the command reaches the server: it did not happen. */
    RESET("resetConnection"),
    /** The connection is closed before the command reaches the server (a clean FIN). */
    CLOSE("closeConnection"),
    /** The server runs the command, the reply is lost and the connection reset: it may have happened. */
    DROP_REPLY("dropReply"),
    /** The command is held forever; only the client's socket timeout ends it. */
    HANG("hang");

    private final String label;

    Fault(String label) {
        this.label = label;
    }

    /** The failCommand data field and the metric label. */
    public String label() {
        return label;
    }
}
