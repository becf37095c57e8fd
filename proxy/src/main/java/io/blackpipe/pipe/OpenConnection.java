package io.blackpipe.pipe;

import io.blackpipe.topology.HostNames;
import io.blackpipe.topology.Member;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * One client connection open through the proxy, as {@code connections list} shows it: the id its history entries and
 * its member's connection carry, the member (upstream address), the client's address, the appName its handshake gave
 * ("" before or without one), and when it opened (epoch milliseconds).
 */
public record OpenConnection(long id, String member, String client, String app, long openedAtMillis) {
    static OpenConnection of(long id, Member member, SocketAddress client, String app, long openedAtMillis) {
        return new OpenConnection(id, member.upstream().toString(), HostNames.ofPeer(client), app, openedAtMillis);
    }

    /** Every client connection open through {@code proxy} now, member by member, each member's by id. Not to be called on an event loop. */
    public static List<OpenConnection> of(ProxyServer proxy) {
        List<OpenConnection> all = new ArrayList<>();
        for (Member member : proxy.members()) {
            all.addAll(proxy.listener(member.upstream()).connections().list());
        }
        return all;
    }
}
