package io.blackpipe.wire;

/**
 * Where an app turns TLS on, for the log lines of a client on the wrong side of a listener's TLS (plaintext on a TLS
 * port, TLS on a plaintext one). Every driver reads tls=true in the URI; a C app (libmongoc) or a PHP one (its
 * extension bundles libmongoc) may set it in code instead, where the URI it logs shows nothing.
 */
public final class TlsInTheApp {
    public static final String WHERE_IT_IS_TURNED_ON = "tls=true in the URI, or in code: mongoc_uri_set_option_as_bool(uri,"
            + " MONGOC_URI_TLS, true) in C, ['tls' => true] in PHP's URI options";

    private TlsInTheApp() {
    }
}
