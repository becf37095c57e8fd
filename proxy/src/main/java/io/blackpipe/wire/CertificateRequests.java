package io.blackpipe.wire;

import io.netty.handler.ssl.util.SimpleKeyManagerFactory;
import java.net.Socket;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import javax.net.ssl.KeyManager;
import javax.net.ssl.ManagerFactoryParameters;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * The key manager of a TLS client without a certificate: it presents none, as the JDK does without a key manager, and
 * notes each blocking socket whose server asked for one. A member that requires one (mongod with a tlsCAFile, by
 * default) then ends the connection with an alert that, under TLS 1.3, comes after the client's handshake ended and
 * may be lost to a broken pipe: the note is how the error can still say what to give.
 */
final class CertificateRequests extends SimpleKeyManagerFactory {
    private final Set<Socket> asked = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));
    private final X509ExtendedKeyManager presentsNone = new X509ExtendedKeyManager() {
        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            if (socket != null) {
                asked.add(socket);
            }
            return null;
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
            return null;
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return null;
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return null;
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return null;
        }
    };

    /** Whether the server asked for a client certificate in {@code socket}'s handshake. */
    boolean askedOn(Socket socket) {
        return asked.contains(socket);
    }

    @Override
    protected void engineInit(KeyStore keyStore, char[] password) {
    }

    @Override
    protected void engineInit(ManagerFactoryParameters parameters) {
    }

    @Override
    protected KeyManager[] engineGetKeyManagers() {
        return new KeyManager[] {presentsNone};
    }
}
