package io.blackpipe.pipe;

import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.UpstreamUri;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/** What a proxy says about its configuration as it starts, before anything is dialled or once its members are known. */
final class StartupNotes {
    /** The upstream URI's option notes already logged in this JVM (see logUpstreamOptions). */
    private static final Set<String> OPTION_NOTES_SAID = ConcurrentHashMap.newKeySet();

    private StartupNotes() {
    }

    /**
     * Says, before anything is dialled, which URI options blackpipe does not know (a misspelt replSet
     * would otherwise go unchecked without a word) and which it passes by, as they are the app's;
     * each line once per JVM: the report and test suites start a proxy per case on one URI.
     */
    static void logUpstreamOptions(UpstreamUri upstream, ProxyLog log) {
        upstream.unknownOptionWarnings().stream().filter(OPTION_NOTES_SAID::add).forEach(log::warn);
        String passedBy = upstream.passedByOptionsNote();
        if (passedBy != null && OPTION_NOTES_SAID.add(passedBy)) {
            log.info(passedBy);
        }
    }

    /**
     * A --member-port for a host the deployment does not have pins nothing now (a typo, or the
     * address apps dial instead of the set's name); it is kept for a member that joins later.
     */
    static void warnOfPinsForNoMember(ProxyConfig config, Collection<MemberAddress> members, ProxyLog log) {
        config.memberPorts().forEach((pinned, port) -> {
            if (!members.contains(pinned)) {
                log.warn("--member-port " + pinned + "=" + port + ": " + pinned + " is not a member of the deployment (members: "
                        + members.stream().map(MemberAddress::toString).collect(Collectors.joining(", "))
                        + "); nothing listens on port " + port + " unless it joins the set later");
            }
        });
    }
}
