package io.blackpipe.pipe;

import io.blackpipe.fault.RuleParser;
import io.blackpipe.fault.RuleSet;
import io.blackpipe.observe.CommandObserver;
import io.blackpipe.observe.ConnectionMeters;
import io.blackpipe.topology.HelloRewriter;
import io.blackpipe.topology.MemberStates;
import io.blackpipe.topology.SimulatedReplicaSet;
import io.blackpipe.wire.Tls;
import io.netty.channel.group.ChannelGroup;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What every connection pair shares: meters, rules, the hello rewriter, member states, the log,
 * the simulated replica set when the proxy presents one (else null), and how to dial members
 * (plaintext or TLS), the change stream cursors members opened, every connection open (which the
 * proxy's close() closes), the failover a simulated primary asked to step down runs (the admin API's, without waiting
 * on the event loop for the node's aborts of the old primary's transactions), the transactions a simulated failover
 * ended, the retried writes' runs, the commits that go alone and the transactions a newer one of their session
 * supersedes (each kept only for a member that needs them), the changes of the writes a simulated primary acknowledged
 * below majority, which a failover may roll back, and the batch inserts made again where a member applied none of one.
 */
record PipeContext(ConnectionMeters.Registry meters, CommandObserver observer, RuleSet rules, RuleParser ruleParser,
                   boolean forwardFailPoints, HelloRewriter rewriter, MemberStates memberStates, ProxyLog log,
                   int connectTimeoutMillis, AtomicInteger requestIds, SimulatedReplicaSet simulation,
                   Tls.Client upstreamTls, ChangeStreamCursors changeStreams, ChannelGroup openConnections,
                   Runnable failover, FailoverEndedTransactions endedTransactions, RetriedWrites retriedWrites,
                   CommitsAlone commits, SupersededTransactions superseded, UnreplicatedWrites unreplicated,
                   BatchInsertReruns batchInserts) {

    /** A request id for a message the proxy writes itself. */
    int nextRequestId() {
        return requestIds.incrementAndGet();
    }
}
