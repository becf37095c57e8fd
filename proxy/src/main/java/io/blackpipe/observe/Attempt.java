package io.blackpipe.observe;

import io.blackpipe.wire.CommandFacts;

/**
 * One command attempt as the proxy saw it arrive: the single value every decision, meter and
 * history line is made from.
 *
 * @param member        the upstream member's address (host:port)
 * @param appName       the connection's handshake appName, "" when none
 * @param connectionId  the proxy's id for the client connection
 * @param attemptNumber 1 for a first attempt, 2 for the first retry, ...
 * @param retrySession  the retry tracker's record of the command's session, null without one
 */
public record Attempt(CommandFacts facts, String member, String appName, long connectionId, int attemptNumber,
                      long startNanos, long invokedAtMicros, RetryTracker.Session retrySession) {
    public boolean isRetry() {
        return attemptNumber > 1;
    }

    public String command() {
        return facts.name();
    }
}
