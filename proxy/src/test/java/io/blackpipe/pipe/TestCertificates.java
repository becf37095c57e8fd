package io.blackpipe.pipe;

import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;

/**
 * Certificates made for one test run with the openssl CLI: a CA, a server certificate for
 * 127.0.0.1/localhost, one signed by the same CA for another name only, a client certificate, and
 * an unrelated CA, all PEM (keys PKCS#8).
 */
public final class TestCertificates {
    public final Path ca;
    public final Path serverCert;
    public final Path serverKey;
    /** Signed by the test CA for elsewhere.invalid only: a server reached as 127.0.0.1 presents a name that is not its own. */
    public final Path misnamedServerCert;
    public final Path misnamedServerKey;
    public final Path clientCert;
    public final Path clientKey;
    /** Client certificate and key in one file, as a URI's tlsCertificateKeyFile wants. */
    public final Path clientCombined;
    public final Path otherCa;

    private TestCertificates(Path dir) {
        ca = dir.resolve("ca.pem");
        serverCert = dir.resolve("server.pem");
        serverKey = dir.resolve("server.key");
        misnamedServerCert = dir.resolve("misnamed-server.pem");
        misnamedServerKey = dir.resolve("misnamed-server.key");
        clientCert = dir.resolve("client.pem");
        clientKey = dir.resolve("client.key");
        clientCombined = dir.resolve("client-combined.pem");
        otherCa = dir.resolve("other-ca.pem");
    }

    public static TestCertificates generate(Path dir) throws IOException, InterruptedException {
        TestCertificates c = new TestCertificates(dir);
        Path caKey = dir.resolve("ca.key");
        Files.writeString(dir.resolve("server.ext"), "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                + "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n");
        Files.writeString(dir.resolve("misnamed-server.ext"), "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,"
                + "keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:elsewhere.invalid\n");
        Files.writeString(dir.resolve("client.ext"), "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                + "extendedKeyUsage=clientAuth\n");
        selfSignedCa(dir, caKey, c.ca, "blackpipe test CA");
        selfSignedCa(dir, dir.resolve("other-ca.key"), c.otherCa, "some other CA");
        signed(dir, caKey, c.ca, c.serverKey, c.serverCert, "localhost", "server.ext");
        signed(dir, caKey, c.ca, c.misnamedServerKey, c.misnamedServerCert, "elsewhere.invalid", "misnamed-server.ext");
        signed(dir, caKey, c.ca, c.clientKey, c.clientCert, "blackpipe test client", "client.ext");
        Files.writeString(c.clientCombined, Files.readString(c.clientCert) + Files.readString(c.clientKey));
        return c;
    }

    private static void selfSignedCa(Path dir, Path key, Path cert, String name) throws IOException, InterruptedException {
        openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key.toString(), "-out", cert.toString(),
                "-days", "2", "-subj", "/CN=" + name);
    }

    private static void signed(Path dir, Path caKey, Path caCert, Path key, Path cert, String name, String ext)
            throws IOException, InterruptedException {
        Path csr = dir.resolve(cert.getFileName() + ".csr");
        openssl(dir, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key.toString(), "-out", csr.toString(), "-subj", "/CN=" + name);
        openssl(dir, "x509", "-req", "-in", csr.toString(), "-CA", caCert.toString(), "-CAkey", caKey.toString(),
                "-CAcreateserial", "-out", cert.toString(), "-days", "2", "-extfile", dir.resolve(ext).toString());
    }

    private static void openssl(Path dir, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add("openssl");
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IllegalStateException("openssl " + String.join(" ", args) + " failed:\n" + output);
        }
    }

    /** A JDK SSLContext trusting the test CA, presenting the client certificate when asked to. */
    public SSLContext clientContext(boolean withClientCertificate) throws IOException {
        SslContextBuilder builder = SslContextBuilder.forClient().sslProvider(SslProvider.JDK).trustManager(ca.toFile());
        if (withClientCertificate) {
            builder.keyManager(clientCert.toFile(), clientKey.toFile());
        }
        return ((JdkSslContext) builder.build()).context();
    }
}
