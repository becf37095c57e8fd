package io.blackpipe.wire;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * Every TLS context the proxy builds, in one place (JDK provider, PEM files): the listener side
 * apps connect to ({@link #server}) and the client side the proxy dials members with ({@link Client}),
 * used both by the Netty pipeline and by the blocking control client.
 */
public final class Tls {
    private Tls() {
    }

    /**
     * The listeners' context: PEM certificate chain and key; with {@code clientCa}, clients must
     * present a certificate signed by it.
     *
     * @throws IllegalArgumentException naming the option whose file cannot be used
     */
    public static SslContext server(Path cert, Path key, Path clientCa) {
        requireReadable("--tls-cert", cert);
        requireReadable("--tls-key", key);
        if (clientCa != null) {
            requireReadable("--tls-client-ca", clientCa);
        }
        SslContext context;
        try { // the builder reads the files as they are given: a bad one throws there already
            SslContextBuilder builder = SslContextBuilder.forServer(cert.toFile(), key.toFile()).sslProvider(SslProvider.JDK);
            if (clientCa != null) {
                builder.trustManager(clientCa.toFile()).clientAuth(ClientAuth.REQUIRE);
            }
            context = builder.build();
        } catch (SSLException | RuntimeException e) {
            throw new IllegalArgumentException("cannot use --tls-cert " + cert + " / --tls-key " + key
                    + (clientCa == null ? "" : " / --tls-client-ca " + clientCa) + ": " + rootMessage(e) + KeyPairCheck.pkcs8Hint(key), e);
        }
        KeyPairCheck.requireKeyOf(cert, key);
        return context;
    }

    private static void requireReadable(String option, Path file) {
        if (file == null) {
            throw new IllegalArgumentException(option + " is required for TLS");
        }
        if (!Files.isReadable(file)) {
            throw new IllegalArgumentException(option + " " + file + " is not a readable file");
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (" + root.getMessage() + ")";
    }

    /**
     * How the proxy talks TLS to upstream members, from the URI options {@code tls}/{@code ssl},
     * {@code tlsCAFile}, {@code tlsCertificateKeyFile} (PEM with certificate and key),
     * {@code tlsCertificateKeyFilePassword} (when that key is encrypted), {@code tlsAllowInvalidCertificates},
     * {@code tlsAllowInvalidHostnames} and {@code tlsInsecure}. The context is built on first use.
     */
    public static final class Client {
        public static final Client OFF = new Client(false, null, null, null, false, false);
        private static final String ASKED_FOR_A_CERTIFICATE = "it asked for a client certificate, and the upstream URI gives none:"
                + " if it requires one, give it with tlsCertificateKeyFile";

        private final boolean enabled;
        private final Path caFile;
        private final Path certificateKeyFile;
        /** tlsCertificateKeyFilePassword: decrypts the key of certificateKeyFile; null when it is not encrypted. */
        private final String certificateKeyPassword;
        private final boolean allowInvalidHostnames;
        private final boolean insecure;
        private SslContext context;
        /** Without a client certificate: which sockets' members asked for one; made with the context. */
        private CertificateRequests certificateRequests;

        public Client(boolean enabled, Path caFile, Path certificateKeyFile, boolean allowInvalidHostnames, boolean insecure) {
            this(enabled, caFile, certificateKeyFile, null, allowInvalidHostnames, insecure);
        }

        /** @param insecure trust any certificate (tlsInsecure, tlsAllowInvalidCertificates) */
        public Client(boolean enabled, Path caFile, Path certificateKeyFile, String certificateKeyPassword,
                      boolean allowInvalidHostnames, boolean insecure) {
            this.enabled = enabled;
            this.caFile = caFile;
            this.certificateKeyFile = certificateKeyFile;
            this.certificateKeyPassword = certificateKeyPassword;
            this.allowInvalidHostnames = allowInvalidHostnames || insecure;
            this.insecure = insecure;
        }

        /** Trusts any certificate and name: for checking the proxy's own TLS listener. */
        public static Client trustingAnything() {
            return new Client(true, null, null, null, true, true);
        }

        /** @param options the URI options, names lower-cased */
        public static Client fromUriOptions(Map<String, String> options) {
            String tls = options.getOrDefault("tls", options.get("ssl"));
            boolean enabled = flag(options, options.containsKey("tls") ? "tls" : "ssl", tls);
            Path ca = path(options.get("tlscafile"));
            Path certKey = path(options.get("tlscertificatekeyfile"));
            String keyPassword = options.get("tlscertificatekeyfilepassword");
            if (keyPassword != null && certKey == null) {
                throw new IllegalArgumentException("the upstream URI sets tlsCertificateKeyFilePassword but no tlsCertificateKeyFile");
            }
            // sslInvalidHostNameAllowed: the Java driver's older name for it, still in connection strings written for it
            String hostnames = options.containsKey("tlsallowinvalidhostnames") ? "tlsallowinvalidhostnames" : "sslinvalidhostnameallowed";
            boolean allowInvalid = flag(options, hostnames, options.get(hostnames));
            boolean insecure = flag(options, "tlsinsecure", options.get("tlsinsecure"));
            // tlsAllowInvalidCertificates: the server's certificate is not checked, so neither is the name in it (as tlsInsecure)
            boolean invalidCertificates = flag(options, "tlsallowinvalidcertificates", options.get("tlsallowinvalidcertificates"));
            boolean anyTlsOption = ca != null || certKey != null || allowInvalid || insecure || invalidCertificates;
            if (tls == null && anyTlsOption) {
                enabled = true; // as the drivers do: a TLS option implies tls=true
            } else if (!enabled && anyTlsOption) {
                throw new IllegalArgumentException("the upstream URI sets tls=false but also TLS options (tlsCAFile, ...)");
            }
            return enabled ? new Client(true, ca, certKey, keyPassword, allowInvalid || insecure, insecure || invalidCertificates) : OFF;
        }

        private static boolean flag(Map<String, String> options, String name, String value) {
            if (value == null) {
                return false;
            }
            return switch (value.toLowerCase(Locale.ROOT)) {
                case "true" -> true;
                case "false" -> false;
                default -> throw new IllegalArgumentException("the upstream URI option " + name + "=" + value + " must be true or false");
            };
        }

        private static Path path(String value) {
            return value == null || value.isBlank() ? null : Path.of(value);
        }

        public boolean enabled() {
            return enabled;
        }

        /** Whether a client certificate is presented (tlsCertificateKeyFile): what MONGODB-X509 authenticates with. */
        public boolean hasClientCertificate() {
            return enabled && certificateKeyFile != null;
        }

        /** A handler to put first in an upstream channel's pipeline; the host is used for SNI and name checks. */
        public SslHandler newHandler(ByteBufAllocator alloc, String host, int port) {
            return context().newHandler(alloc, host, port);
        }

        /**
         * Wraps a connected socket in TLS and completes the handshake.
         *
         * @throws IOException naming the address and the options to check when the handshake fails
         */
        public Socket wrap(Socket plain, String host, int port) throws IOException {
            SSLSocket socket = (SSLSocket) ((JdkSslContext) context()).context().getSocketFactory()
                    .createSocket(plain, host, port, true);
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm(allowInvalidHostnames ? null : "HTTPS");
            socket.setSSLParameters(parameters);
            socket.setUseClientMode(true);
            try {
                socket.startHandshake();
            } catch (IOException e) {
                socket.close();
                throw new SSLException("TLS handshake with " + host + ":" + port + " failed: " + e.getMessage()
                        + (answeredWithoutTls(e) ? " (it answered without TLS: leave tls=true out of the URI if it does not use TLS)"
                        : askedForACertificate(socket) ? " (" + ASKED_FOR_A_CERTIFICATE + ")"
                        : " (check the upstream URI's tlsCAFile / tlsAllowInvalidCertificates / tlsAllowInvalidHostnames"
                        + " / tlsCertificateKeyFile)"), e);
            }
            return socket;
        }

        /**
         * {@code e}, which {@code socket} (made by {@link #wrap}) failed with after its handshake, saying what to give when
         * the member asked for a client certificate: under TLS 1.3 one that requires it says so only after the handshake.
         */
        public IOException explained(IOException e, Socket socket) {
            if (e instanceof java.net.SocketTimeoutException || !askedForACertificate(socket)) {
                return e;
            }
            return new SSLException(e.getMessage() + " (" + ASKED_FOR_A_CERTIFICATE + ")", e);
        }

        private synchronized boolean askedForACertificate(Socket socket) {
            return certificateRequests != null && certificateRequests.askedOn(socket);
        }

        /** The JDK's words for a first record that is no TLS record: the server spoke in the clear. */
        private static boolean answeredWithoutTls(IOException e) {
            return e.getMessage() != null && e.getMessage().contains("Unsupported or unrecognized SSL message");
        }

        /** @throws IllegalStateException naming the URI option whose file cannot be used */
        public synchronized SslContext context() {
            if (context == null) {
                if (!insecure && caFile != null) {
                    readable("tlsCAFile", caFile);
                }
                if (certificateKeyFile != null) {
                    readable("tlsCertificateKeyFile", certificateKeyFile);
                }
                try { // the builder reads the files as they are given: a bad one throws there already
                    SslContextBuilder builder = SslContextBuilder.forClient().sslProvider(SslProvider.JDK)
                            .endpointIdentificationAlgorithm(allowInvalidHostnames ? null : "HTTPS");
                    if (insecure) {
                        builder.trustManager(InsecureTrustManagerFactory.INSTANCE);
                    } else if (caFile != null) {
                        builder.trustManager(caFile.toFile());
                    }
                    if (certificateKeyFile != null) {
                        builder.keyManager(certificateKeyFile.toFile(), certificateKeyFile.toFile(), certificateKeyPassword);
                    } else {
                        certificateRequests = new CertificateRequests();
                        builder.keyManager(certificateRequests);
                    }
                    context = builder.build();
                } catch (SSLException | RuntimeException e) {
                    String ca = insecure || caFile == null ? null : "tlsCAFile " + caFile;
                    String certificateKey = certificateKeyFile == null ? null : "tlsCertificateKeyFile " + certificateKeyFile
                            + (certificateKeyPassword == null ? ", no tlsCertificateKeyFilePassword" : ", with tlsCertificateKeyFilePassword");
                    throw new IllegalStateException("cannot use the upstream URI's TLS files (" + (ca == null ? certificateKey
                            : certificateKey == null ? ca : ca + ", " + certificateKey) + "): " + rootMessage(e), e);
                }
            }
            return context;
        }

        private static void readable(String option, Path file) {
            if (!Files.isReadable(file)) {
                throw new IllegalStateException("the upstream URI's " + option + " " + file + " is not a readable file");
            }
        }

        @Override
        public String toString() {
            if (!enabled) {
                return "plaintext";
            }
            return "TLS" + (caFile == null ? "" : " (CA " + caFile + ")") + (certificateKeyFile == null ? "" : " with a client certificate")
                    + (insecure ? ", insecure" : allowInvalidHostnames ? ", host names not checked" : "");
        }
    }
}
