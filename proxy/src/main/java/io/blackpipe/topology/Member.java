package io.blackpipe.topology;

/**
 * One upstream member: its name as the replica set knows it, the address the proxy dials to
 * reach it (the same, unless the name only resolves inside the deployment's own network), and
 * the address the proxy advertises for it (where its listener is).
 */
public record Member(MemberAddress upstream, MemberAddress advertised, MemberAddress dial) {
    public Member(MemberAddress upstream, MemberAddress advertised) {
        this(upstream, advertised, upstream);
    }

    @Override
    public String toString() {
        return "upstream " + upstream + " -> advertised " + advertised;
    }
}
