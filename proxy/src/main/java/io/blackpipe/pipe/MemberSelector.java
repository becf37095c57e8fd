package io.blackpipe.pipe;

import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.fault.DeploymentFaults.Begun;
import io.blackpipe.observe.NameSpelling;
import io.blackpipe.topology.Discovery;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberMap;
import io.blackpipe.topology.MemberState;
import io.blackpipe.topology.MemberStates;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Which listeners a member selector names: "primary", "secondary" (by the role each member last
 * reported), "all", or a member's upstream or advertised host:port (see
 * {@link io.blackpipe.fault.DeploymentFaults}).
 */
final class MemberSelector {
    private final Map<MemberAddress, MemberListener> listeners;
    private final Discovery.Deployment deployment;
    private final MemberMap members;
    private final MemberStates states;

    MemberSelector(Map<MemberAddress, MemberListener> listeners, Discovery.Deployment deployment, MemberMap members,
                   MemberStates states) {
        this.listeners = listeners;
        this.deployment = deployment;
        this.members = members;
        this.states = states;
    }

    /**
     * Whether {@code member} can name a member of this deployment: primary and all always,
     * secondary in a replica set of more than one member, or a member's upstream or advertised
     * host:port. Roles move, so a role may still name no member at the moment (see {@link #select}).
     */
    boolean knows(String member) {
        return switch (member) {
            case "primary", "all" -> true;
            case "secondary" -> canHaveSecondaries();
            default -> !select(member).isEmpty();
        };
    }

    private boolean canHaveSecondaries() {
        return deployment.isReplicaSet() && listeners.size() > 1;
    }

    /** The listeners {@code member} selects now; none is an error saying what would select one. */
    List<MemberListener> selectSome(String member) {
        List<MemberListener> selected = select(member);
        if (selected.isEmpty()) {
            throw knows(member) ? new NoMemberInRole(noMember(member)) : new IllegalArgumentException(noMember(member));
        }
        return selected;
    }

    /** "no member 'x' (known: primary, secondary, all, db1:27017 / localhost:27017, ...)": why {@code member} selects none. */
    String noMember(String member) {
        return noMember(member, true);
    }

    /** The same for a rule's member, which is never "all" (a rule without one is on all). */
    String noRuleMember(String member) {
        return noMember(member, false);
    }

    private String noMember(String member, boolean all) {
        List<String> known = new ArrayList<>(canHaveSecondaries() ? List.of("primary", "secondary") : List.of("primary"));
        if (all) {
            known.add("all");
        }
        List<String> names = new ArrayList<>(known);
        List<String> hostPorts = new ArrayList<>();
        for (Member m : members.members()) {
            hostPorts.add(m.upstream().equals(m.advertised()) ? m.upstream().toString() : m.upstream() + " / " + m.advertised());
            names.add(m.upstream().toString());
            names.add(m.advertised().toString());
        }
        known.addAll(hostPorts);
        if (knows(member) && (member.equals("primary") || member.equals("secondary"))) { // a role no member has now: an election
            return "no member is " + member + " now (the members: " + String.join(", ", hostPorts) + ")";
        }
        String likely = NameSpelling.likelyMeant(member, names);
        return "no member '" + member + "'" + (likely == null ? "" : ": did you mean '" + likely + "'?")
                + " (known: " + String.join(", ", known) + ")";
    }

    /** The listeners {@code member} names now (none when it names no member). */
    List<MemberListener> select(String member) {
        List<MemberListener> selected = new ArrayList<>();
        MemberAddress address = asAddress(member);
        for (MemberListener listener : listeners.values()) {
            Member m = listener.member();
            MemberState.Role role = states.of(m.upstream()).role();
            boolean match = switch (member) {
                case "all" -> true;
                case "primary" -> role == MemberState.Role.PRIMARY;
                case "secondary" -> role == MemberState.Role.SECONDARY;
                default -> address != null && (address.equals(m.upstream()) || address.equals(m.advertised()));
            };
            if (match) {
                selected.add(listener);
            }
        }
        return selected;
    }

    /**
     * A host:port as a member's address, however it is spelt (a name in any case, an IPv6 literal in any form:
     * "[0:0:0:0:0:0:0:1]:27017" is "[::1]:27017"); null for anything else, which names no member.
     */
    private static MemberAddress asAddress(String member) {
        if (member.indexOf(':') < 0) {
            return null; // a host alone is no member's name: parsing would give it port 27017
        }
        try {
            return MemberAddress.parse(member);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** See DeploymentFaults#rollingRestartOrder: the secondaries of now, then the members in no other role, then the primaries. */
    DeploymentFaults.RollingOrder rollingRestartOrder() {
        List<String> order = new ArrayList<>();
        List<String> inNoOtherRole = new ArrayList<>();
        List<String> primaries = new ArrayList<>(); // a replica set's one, or every router of a sharded cluster
        for (Member member : members.members()) {
            String name = member.upstream().toString();
            switch (states.of(member.upstream()).role()) {
                case SECONDARY -> order.add(name);
                case PRIMARY -> primaries.add(name);
                default -> inNoOtherRole.add(name);
            }
        }
        order.addAll(inNoOtherRole);
        order.addAll(primaries);
        return new DeploymentFaults.RollingOrder(order, primaries);
    }

    /** A fault on one listener: returns the mark of the fault it began (see {@link MemberListener#endIfStill}). */
    interface ListenerFault {
        long apply(MemberListener listener) throws InterruptedException;
    }

    /** Applies {@code fault} to each listener {@code member} selects; returns what it began on each. */
    List<Begun> beginOnEach(String member, String fault, ListenerFault action) {
        List<Begun> begun = new ArrayList<>();
        for (MemberListener listener : selectSome(member)) {
            begun.add(beginOn(listener, fault, action));
        }
        return begun;
    }

    /** Restores each listener {@code member} selects, though one cannot be (its port taken): that one is named after. */
    void restoreEach(String member) {
        List<String> failed = new ArrayList<>();
        for (MemberListener listener : selectSome(member)) {
            try {
                beginOn(listener, "restore", on -> { on.restore(); return 0L; }); // a restore begins nothing: no mark
            } catch (Exception e) { // Netty's sync() passes a bind's BindException on unchecked
                failed.add(listener.member().upstream() + " (" + (e.getMessage() != null ? e.getMessage() : e.toString()) + ")");
            }
        }
        if (!failed.isEmpty()) {
            throw new IllegalStateException("could not restore " + String.join(", ", failed) + "; every other member was restored");
        }
    }

    /** Applies {@code fault} to {@code listener}; returns what it began there. */
    Begun beginOn(MemberListener listener, String fault, ListenerFault action) {
        try {
            return new Begun(listener.member().upstream().toString(), fault, action.apply(listener));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while acting on the listener of " + listener.member().upstream());
        }
    }

    /** Ends the fault {@code begun} on its member, unless it ended already (see {@link MemberListener#endIfStill}). */
    void endIfStill(Begun begun) {
        for (MemberListener listener : select(begun.upstream())) {
            try {
                listener.endIfStill(begun.fault(), begun.mark());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while ending the " + begun.fault() + " of " + begun.upstream());
            }
        }
    }
}
