package io.blackpipe.pipe;

import io.netty.channel.ChannelFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.NetUtil;
import java.nio.channels.spi.SelectorProvider;

/**
 * The server sockets of the proxy's listeners and its admin API, of the family their bind host is. The JDK opens an
 * IPv6 socket wherever the host has IPv6, and binds it to the IPv4 wildcard as to "::": {@code --host 0.0.0.0}
 * listened on every IPv6 address too, which an IPv4 firewall leaves open, while the log said 0.0.0.0 (mongod's bindIp
 * 0.0.0.0 is IPv4 only). An IPv4 address now gets an IPv4 socket; "::" stays both, as the README says.
 */
public final class ListeningSockets {
    private ListeningSockets() {
    }

    /** The server socket channels to bind {@code host} with: IPv4 for an IPv4 address, else the JDK's default. */
    public static ChannelFactory<ServerChannel> on(String host) {
        if (NetUtil.isValidIpV4Address(host)) {
            return () -> new NioServerSocketChannel(SelectorProvider.provider(), SocketProtocolFamily.INET);
        }
        return NioServerSocketChannel::new;
    }
}
