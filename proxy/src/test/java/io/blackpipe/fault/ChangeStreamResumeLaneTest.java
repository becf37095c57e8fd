package io.blackpipe.fault;

import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.blackpipe.testing.UpstreamLane;

/**
 * {@link ChangeStreamResumeDriverTest} against the test lane's deployment, where it has change
 * streams (an external deployment, a mongod on PATH, Docker): a real server's change stream and
 * its resume through the proxy. jongodb answers $changeStream NotImplemented: there this class
 * is skipped, saying so, and the scripted upstream's run stands.
 */
class ChangeStreamResumeLaneTest extends ChangeStreamResumeDriverTest {
    @Override
    Upstream startUpstream() {
        // each case reported skipped, with why
        assumeFalse(UpstreamLane.isJongodb(), "the " + UpstreamLane.name() + " lane has no $changeStream");
        return new Upstream(UpstreamLane.uri(), UpstreamLane.directClient(), () -> { });
    }
}
