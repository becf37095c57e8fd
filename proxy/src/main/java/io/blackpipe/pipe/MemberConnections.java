package io.blackpipe.pipe;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.bson.BsonDocument;

/** The open client connections of one member ({@link MemberListener}), and what a deployment fault does to all of them. */
final class MemberConnections {
    /** How long an end waits for a connection's event loop (a busy loop gets there well within it). */
    private static final long END_WAIT_MILLIS = 5_000;
    private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    /**
     * The open connections again, by event loop, so that an event for all of them costs one task
     * per loop, not one per connection. Each set is touched on its own loop only.
     */
    private final Map<EventLoop, Set<ClientConnection>> byLoop = new ConcurrentHashMap<>();

    /** Called on the connection's event loop. */
    void accepted(Channel client, ClientConnection connection) {
        channels.add(client);
        byLoop.computeIfAbsent(client.eventLoop(), loop -> new HashSet<>()).add(connection);
    }

    /** Called on the connection's event loop, when it ended for the proxy (a forgotten one is open for its client). */
    void closed(Channel client, ClientConnection connection) {
        channels.remove(client);
        Set<ClientConnection> onLoop = byLoop.get(client.eventLoop());
        if (onLoop != null) {
            onLoop.remove(connection);
        }
    }

    int open() {
        return channels.size();
    }

    /** The event loops that serve (or served) this member's connections. */
    Set<EventLoop> eventLoops() {
        return byLoop.keySet();
    }

    /** How many of this member's connections are open on {@code loop}; called on that loop. */
    int openOn(EventLoop loop) {
        Set<ClientConnection> onLoop = byLoop.get(loop);
        return onLoop == null ? 0 : onLoop.size();
    }

    /** This member's connections open on {@code loop} (a copy); called on that loop. */
    List<ClientConnection> on(EventLoop loop) {
        Set<ClientConnection> onLoop = byLoop.get(loop);
        return onLoop == null ? List.of() : List.copyOf(onLoop);
    }

    /** This member's open connections by id, each described on its own event loop. Not to be called on an event loop. */
    List<OpenConnection> list() {
        List<Future<List<OpenConnection>>> asked = new ArrayList<>();
        byLoop.forEach((loop, onLoop) -> {
            try {
                asked.add(loop.submit(() -> onLoop.stream().map(ClientConnection::describe).toList()));
            } catch (RejectedExecutionException e) {
                // the proxy is closing: that loop's connections are closing with it
            }
        });
        List<OpenConnection> all = new ArrayList<>();
        for (Future<List<OpenConnection>> answer : asked) {
            if (answer.awaitUninterruptibly(END_WAIT_MILLIS) && answer.isSuccess()) {
                all.addAll(answer.getNow());
            }
        }
        all.sort(Comparator.comparingLong(OpenConnection::id));
        return all;
    }

    /**
     * Runs {@code action} for every open connection on its own event loop: one task per loop. Returns what completes
     * once every loop has run it (what a loop wrote and flushed meanwhile is on its way to the clients then).
     */
    CompletableFuture<Void> each(Consumer<ClientConnection> action) {
        List<CompletableFuture<Void>> ran = new ArrayList<>();
        byLoop.forEach((loop, onLoop) -> {
            CompletableFuture<Void> done = new CompletableFuture<>();
            ran.add(done);
            try {
                loop.execute(() -> {
                    try {
                        // a copy: an action may close its connection, and the close may leave the set meanwhile
                        for (ClientConnection connection : onLoop.toArray(new ClientConnection[0])) {
                            connection.runOrClose(() -> action.accept(connection));
                        }
                    } finally {
                        done.complete(null);
                    }
                });
            } catch (RejectedExecutionException stopping) { // the proxy closes: no connection is left to tell
                done.complete(null);
            }
        });
        return CompletableFuture.allOf(ran.toArray(new CompletableFuture<?>[0]));
    }

    /**
     * Ends every open connection, and returns (how many) once each is ended: with a reset (RST), or, for a member
     * that exits ({@code interruptedWith}: the topologyVersion of its InterruptedAtShutdown errors), its commands
     * interrupted and a close (FIN). What it cuts is labelled {@code fault}. Not to be called on an event loop.
     */
    int end(String fault, BsonDocument interruptedWith) {
        // A copy first: a reset makes a driver close its other connections (its monitor's error
        // clears its pool), and those would leave the group before this loop reached them.
        List<Channel> open = List.copyOf(channels);
        List<Future<?>> ends = new ArrayList<>();
        for (Channel client : open) {
            ends.add(client.eventLoop().submit(() -> {
                if (client.isActive()) {
                    ClientConnection connection = client.pipeline().get(ClientConnection.class);
                    if (connection != null) {
                        connection.endBy(fault, interruptedWith);
                    } else {
                        client.config().setOption(ChannelOption.SO_LINGER, 0);
                        client.close();
                    }
                }
            }));
        }
        for (Future<?> end : ends) {
            end.awaitUninterruptibly(END_WAIT_MILLIS);
        }
        return ends.size();
    }

    /**
     * The member fell ({@link #end}'s arguments) while blackholed. Across a partition neither its reset nor its close
     * reaches its clients: each open connection ends only when the blackhole does, and meanwhile lets nothing through.
     */
    void fallBehindTheBlackhole(String fault, BsonDocument interruptedWith) {
        each(connection -> connection.fellBehindTheBlackhole(fault, interruptedWith));
    }

    /**
     * The member's blackhole ended, {@code downBy} what held it down then (null: it was up): what waited in it goes on,
     * but a connection its member fell behind the blackhole ends as the fall would have ended it, and so does one made
     * while the member is down (it never reached the member, which refuses it now). A restart's errors replace what
     * the member sent through the blackhole: it exited with those commands in flight.
     */
    void blackholeEnded(String downBy) {
        each(connection -> connection.blackholeEnded(downBy));
    }

    /** The proxy closes: every connection closes now. */
    void close() {
        channels.close();
    }
}
