package io.blackpipe.pipe;

import io.blackpipe.observe.ConnectionMeters;
import io.blackpipe.topology.HelloRewriter;

/** What every connection pair shares: meters, the hello rewriter, the log. */
record PipeContext(ConnectionMeters.Registry meters, HelloRewriter rewriter, ProxyLog log, int connectTimeoutMillis) {
}
