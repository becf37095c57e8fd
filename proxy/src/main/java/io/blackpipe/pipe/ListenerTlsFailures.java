package io.blackpipe.pipe;

/**
 * What an app's failed TLS handshake with a listener most likely means, from the JDK's words for it: the JDK says
 * only what broke, and an app whose CA file is wrong leaves a line that names neither the certificate nor the CA.
 */
final class ListenerTlsFailures {
    private static final String WHAT_TO_GIVE_THE_APP = "give it the CA that signed the certificate (the driver's tlsCAFile; for a"
            + " Java app, its trust store: -Djavax.net.ssl.trustStore), and connect by a name or address the certificate holds";

    private ListenerTlsFailures() {
    }

    /** What to check for a TLS failure on a listener, or null when its message says nothing more. */
    static String whatToCheck(String message) {
        if (message == null) {
            return null;
        }
        if (message.contains("Empty client certificate chain") || message.contains("null cert chain")) {
            return "--tls-client-ca requires a client certificate its CA signed, and the app gave none: give it one"
                    + " (the driver's tlsCertificateKeyFile); a Java app gives none when its certificate's CA is another";
        }
        if (message.contains("PKIX path") || message.contains("certification path")) {
            return "the app's client certificate is not signed by the CA in --tls-client-ca";
        }
        if (message.contains("fatal alert: unknown_ca") || message.contains("fatal alert: bad_certificate")
                || message.contains("fatal alert: certificate_unknown") || message.contains("fatal alert: certificate_expired")) {
            return "the app did not accept the proxy's certificate (--tls-cert): " + WHAT_TO_GIVE_THE_APP;
        }
        if (message.contains("AEAD cipher fragment")) {
            // OpenSSL's alert at a TLS 1.3 certificate it refused is sent in the clear, where the JDK reads a record too short
            return "an OpenSSL-based app (Node.js, Python, mongosh) ends the handshake so when it did not accept the proxy's"
                    + " certificate (--tls-cert): " + WHAT_TO_GIVE_THE_APP;
        }
        return null;
    }
}
