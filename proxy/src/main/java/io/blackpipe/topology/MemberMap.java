package io.blackpipe.topology;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The real-to-proxy address map. A member gets a listener the first time it is seen (at start,
 * or later in a hello reply after a reconfig) and keeps that port for the proxy's lifetime.
 * Ports: pinned ones first, otherwise the base port, then base+1, base+2, ... (or ephemeral
 * ports when the base is 0). A port that cannot be bound is an error, never silently another.
 */
public final class MemberMap {
    /** Opens a listener for a member and returns the port it actually bound. */
    @FunctionalInterface
    public interface ListenerOpener {
        int open(MemberAddress upstream, int requestedPort) throws Exception;
    }

    private final String advertiseHost;
    private final int basePort;
    private final Map<MemberAddress, Integer> pinnedPorts;
    private final Map<MemberAddress, MemberAddress> dialAliases;
    private final ListenerOpener opener;
    private final Map<MemberAddress, Member> members = new LinkedHashMap<>();
    private int nextPort;

    public MemberMap(String advertiseHost, int basePort, Map<MemberAddress, Integer> pinnedPorts, ListenerOpener opener) {
        this(advertiseHost, basePort, pinnedPorts, Map.of(), opener);
    }

    /** @param dialAliases members whose set name the proxy cannot dial, with the address that reaches them */
    public MemberMap(String advertiseHost, int basePort, Map<MemberAddress, Integer> pinnedPorts,
                     Map<MemberAddress, MemberAddress> dialAliases, ListenerOpener opener) {
        this.advertiseHost = advertiseHost;
        this.basePort = basePort;
        this.pinnedPorts = Map.copyOf(pinnedPorts);
        this.dialAliases = Map.copyOf(dialAliases);
        this.opener = opener;
        this.nextPort = basePort;
    }

    /** The member for an upstream address, opening its listener if it is new. */
    public synchronized Member ensure(MemberAddress upstream) {
        Member known = members.get(upstream);
        if (known != null) {
            return known;
        }
        int port = open(upstream);
        Member member = new Member(upstream, new MemberAddress(advertiseHost, port), dialAliases.getOrDefault(upstream, upstream));
        members.put(upstream, member);
        return member;
    }

    private int open(MemberAddress upstream) {
        Integer pinned = pinnedPorts.get(upstream);
        int port;
        if (pinned != null) {
            port = pinned;
        } else if (basePort == 0) {
            port = 0;
        } else {
            do {
                port = nextPort++;
            } while (pinnedPorts.containsValue(port));
        }
        try {
            return opener.open(upstream, port);
        } catch (Exception e) {
            throw new IllegalStateException("cannot listen on port " + port + " for member " + upstream + ": " + e.getMessage(), e);
        }
    }

    public synchronized Member byUpstream(MemberAddress upstream) {
        return members.get(upstream);
    }

    /** The member the proxy advertises at {@code advertised}, or null. */
    public synchronized Member byAdvertised(MemberAddress advertised) {
        for (Member member : members.values()) {
            if (member.advertised().equals(advertised)) {
                return member;
            }
        }
        return null;
    }

    public synchronized List<Member> members() {
        return new ArrayList<>(members.values());
    }

    public synchronized Collection<MemberAddress> upstreams() {
        return new ArrayList<>(members.keySet());
    }
}
