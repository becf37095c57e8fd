package io.blackpipe.observe;

/** How one command attempt ended, as the proxy saw it. */
public enum Outcome {
    /** A reply without error. */
    OK("ok"),
    /** A server error reply (ok:0 or writeConcernError), real or injected: the client knows it failed. */
    ERROR("error"),
    /** Reset, close or dropped reply: the client cannot know whether the command happened. */
    NETWORK_ERROR("network_error"),
    /** A moreToCome request (w:0): nobody waits for a reply. */
    NO_REPLY("no_reply");

    private final String label;

    Outcome(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    public boolean failed() {
        return this == ERROR || this == NETWORK_ERROR;
    }

    /** Jepsen's view of the outcome: ok, fail (did not happen) or info (may have happened). */
    public String historyType(boolean writeConcernError) {
        switch (this) {
            case OK: return "ok";
            case ERROR: return writeConcernError ? "info" : "fail";
            case NO_REPLY: return "info";
            default: return "info";
        }
    }
}
