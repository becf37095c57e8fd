package io.blackpipe.pipe;

import io.blackpipe.topology.Discovery;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberState;
import io.blackpipe.topology.MemberStates;
import io.blackpipe.topology.StepDown;
import io.blackpipe.wire.Tls;
import io.blackpipe.wire.auth.Credential;
import java.util.List;

/**
 * failover on a real replica set: find the primary and ask it to step down, authenticated with
 * the upstream URI's credentials when it has any.
 */
final class PrimaryStepDown {
    private final Credential credential;
    private final Tls.Client tls;
    private final int timeoutMillis;
    private final ProxyLog log;

    PrimaryStepDown(Credential credential, Tls.Client tls, int timeoutMillis, ProxyLog log) {
        this.credential = credential;
        this.tls = tls;
        this.timeoutMillis = timeoutMillis;
        this.log = log;
    }

    /**
     * Says at start, not at the first failover, when the URI's credentials are of no use to the
     * stepdown (e.g. authMechanism=GSSAPI). Only a warning: apps authenticate end to end through
     * the proxy whatever the URI says, and a proxy that never fails over works as before.
     */
    void warnIfItCannotAuthenticate(Discovery.Deployment deployment) {
        String unusable = credential == null ? null : credential.unusableBecause(tls.hasClientCertificate());
        if (unusable != null && deployment.isReplicaSet() && deployment.members().size() > 1) {
            log.warn("failover will fail: " + unusable);
        }
    }

    /**
     * @param states the members' roles, refreshed just before
     * @throws IllegalStateException when no member is primary, or the primary refuses (the reason logged too)
     */
    void run(List<Member> members, MemberStates states) {
        Member primary = members.stream()
                .filter(m -> states.of(m.upstream()).role() == MemberState.Role.PRIMARY)
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no member is known to be primary yet"));
        log.info("failover: asking primary " + primary.upstream() + " to step down"
                + (credential == null ? "" : ", authenticated as " + credential.describe(credential.mechanism())));
        try {
            StepDown.stepDown(primary.dial(), timeoutMillis, tls, credential);
        } catch (IllegalStateException e) {
            log.warn(e.getMessage());
            throw e;
        }
    }
}
