package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * What a peer whose bytes frame as no MongoDB message speaks instead, when its first bytes say it: an HTTP request
 * read as "message length 542393671 exceeds the limit", and a TLS handshake on a plaintext port as "unknown opcode
 * -1125123487", neither saying what to check.
 */
final class OtherProtocols {
    private static final Set<String> HTTP_METHODS = Set.of("GET ", "POST", "PUT ", "HEAD", "DELE", "OPTI", "PATC", "CONN", "TRAC");
    private static final byte TLS_HANDSHAKE = 0x16;
    private static final byte TLS_MAJOR_VERSION = 0x03;

    private OtherProtocols() {
    }

    /** What the message at {@code start} reads as, for a log line, or null when it reads as nothing known. */
    static String spokenBy(ByteBuf in, int start) {
        if (in.writerIndex() - start < 4) {
            return null;
        }
        if (in.getByte(start) == TLS_HANDSHAKE && in.getByte(start + 1) == TLS_MAJOR_VERSION) {
            return "it begins a TLS handshake: the client uses TLS and this listener does not; start the proxy with --tls-cert"
                    + " and --tls-key, or connect without TLS (the app turns it on with " + TlsInTheApp.WHERE_IT_IS_TURNED_ON + ")";
        }
        String first = in.toString(start, 4, StandardCharsets.ISO_8859_1);
        if (first.equals("PRI ")) { // "PRI * HTTP/2.0": a client speaking HTTP/2 from its first byte, as gRPC's do
            return "it reads as HTTP/2's connection preface (\"PRI * HTTP/2.0\"): an HTTP/2 or gRPC client on a MongoDB port;"
                    + " the admin API is on --admin-port, and speaks HTTP/1.1";
        }
        if (HTTP_METHODS.contains(first)) {
            return "it reads as an HTTP request (\"" + first.trim() + " ...\"): an HTTP client on a MongoDB port; the admin API"
                    + " is on --admin-port";
        }
        return null;
    }
}
