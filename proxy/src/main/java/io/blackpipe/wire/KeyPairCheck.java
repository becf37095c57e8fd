package io.blackpipe.wire;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Whether a listener's key is its certificate's, and is in the form the JDK reads: the JDK takes any pair, and with another key every handshake fails,
 * "bad signature" at the client and a cipher error in the proxy's log, naming neither file. Called once the files
 * were read as TLS takes them, so what they are otherwise is not this check's to say.
 */
final class KeyPairCheck {
    private static final Pattern PKCS8 = Pattern.compile("-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");
    private static final byte[] PROBE = "blackpipe".getBytes(StandardCharsets.US_ASCII);

    private KeyPairCheck() {
    }

    /** @throws IllegalArgumentException naming both options when {@code key} is not the key of {@code cert}'s (first) certificate */
    static void requireKeyOf(Path cert, Path key) {
        X509Certificate certificate;
        Matcher pem;
        try (InputStream in = Files.newInputStream(cert)) {
            certificate = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
            pem = PKCS8.matcher(Files.readString(key, StandardCharsets.US_ASCII));
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            return;
        }
        if (!pem.find()) {
            return;
        }
        PublicKey publicKey = certificate.getPublicKey();
        String signing = switch (publicKey.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "EdDSA", "Ed25519", "Ed448" -> "EdDSA";
            default -> null; // RSASSA-PSS and the rarer kinds: left to the handshake
        };
        if (signing != null && !signs(pem.group(1), publicKey, signing)) {
            throw new IllegalArgumentException("--tls-key " + key + " is not the private key of the certificate in --tls-cert " + cert
                    + " (" + certificate.getSubjectX500Principal().getName() + "): every TLS handshake would fail");
        }
    }

    /**
     * What to do with a key in another PEM form than PKCS#8 (openssl's "traditional" RSA or EC key), which the JDK cannot
     * read ("algid parse error, not a sequence" says nothing of the form); "" for any other key.
     */
    static String pkcs8Hint(Path key) {
        String text;
        try {
            text = Files.readString(key, StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            return "";
        }
        return text.contains("-----BEGIN RSA PRIVATE KEY-----") || text.contains("-----BEGIN EC PRIVATE KEY-----")
                ? " (--tls-key must be PKCS#8, unencrypted: openssl pkcs8 -topk8 -nocrypt -in " + key + " -out KEY.pk8)" : "";
    }

    /** Whether the PKCS#8 key in {@code base64} signs what {@code publicKey} verifies. */
    private static boolean signs(String base64, PublicKey publicKey, String algorithm) {
        try {
            PrivateKey privateKey = KeyFactory.getInstance(publicKey.getAlgorithm())
                    .generatePrivate(new PKCS8EncodedKeySpec(Base64.getMimeDecoder().decode(base64)));
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(privateKey);
            signer.update(PROBE);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(publicKey);
            verifier.update(PROBE);
            return verifier.verify(signature);
        } catch (InvalidKeySpecException e) {
            return false; // a key of another kind than the certificate's
        } catch (NoSuchAlgorithmException e) {
            return true; // this JDK cannot tell: left to the handshake
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }
}
