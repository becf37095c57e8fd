package io.blackpipe.wire.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The SCRAM client against published conversations: RFC 7677's SCRAM-SHA-256 example (also the
 * MongoDB Authentication spec's) and the spec's SCRAM-SHA-1 example, which hashes MongoDB's
 * password digest, so a wrong digest, escaping or key derivation changes every byte of the proof.
 */
class ScramClientTest {
    // RFC 7677 section 3 / the spec's SCRAM-SHA-256 conversation, user "user", password "pencil".
    private static final String SHA256_CLIENT_FIRST = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
    private static final String SHA256_SERVER_FIRST = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
    private static final String SHA256_CLIENT_FINAL =
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
    private static final String SHA256_SERVER_FINAL = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

    // The MongoDB Authentication spec's SCRAM-SHA-1 conversation, user "user", password "pencil".
    private static final String SHA1_CLIENT_FIRST = "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL";
    private static final String SHA1_SERVER_FIRST = "r=fyko+d2lbbFgONRv9qkxdawLHo+Vgk7qvUOKUwuWLIWg4l/9SraGMHEE,s=rQ9ZY3MntBeuP3E1TDVC4w==,i=10000";
    private static final String SHA1_CLIENT_FINAL = "c=biws,r=fyko+d2lbbFgONRv9qkxdawLHo+Vgk7qvUOKUwuWLIWg4l/9SraGMHEE,p=MC2T8BvbmWRckDw8oWl5IVghwCY=";
    private static final String SHA1_SERVER_FINAL = "v=UMWeI25JD1yNYZRMpZ4VHvhZ9e0=";

    private static ScramClient client(Mechanism mechanism, String user, String password, String nonce) {
        return new ScramClient(mechanism, user, ScramClient.scramPassword(mechanism, user, password), nonce);
    }

    private static ScramClient sha256() {
        return client(Mechanism.SCRAM_SHA_256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    @Test
    void scramSha256MatchesRfc7677() throws Exception {
        ScramClient scram = sha256();
        assertEquals(SHA256_CLIENT_FIRST, text(scram.clientFirst()));
        assertEquals(SHA256_CLIENT_FINAL, text(scram.clientFinal(bytes(SHA256_SERVER_FIRST))));
        scram.verifyServerFinal(bytes(SHA256_SERVER_FINAL)); // no exception: the server proved itself
    }

    @Test
    void scramSha1MatchesTheMongodbSpecWithItsPasswordDigest() throws Exception {
        assertEquals("1c33006ec1ffd90f9cadcbcc0e118200", ScramClient.scramPassword(Mechanism.SCRAM_SHA_1, "user", "pencil"),
                "hex(MD5(\"user:mongo:pencil\"))");
        ScramClient scram = client(Mechanism.SCRAM_SHA_1, "user", "pencil", "fyko+d2lbbFgONRv9qkxdawL");
        assertEquals(SHA1_CLIENT_FIRST, text(scram.clientFirst()));
        assertEquals(SHA1_CLIENT_FINAL, text(scram.clientFinal(bytes(SHA1_SERVER_FIRST))));
        scram.verifyServerFinal(bytes(SHA1_SERVER_FINAL));
    }

    @Test
    void aWrongPasswordGivesAnotherProofAndRejectsTheRealServersSignature() throws Exception {
        ScramClient scram = client(Mechanism.SCRAM_SHA_256, "user", "pencil2", "rOprNGfwEbeRWgbNEkqO");
        String clientFinal = text(scram.clientFinal(bytes(SHA256_SERVER_FIRST)));
        assertTrue(clientFinal.startsWith("c=biws,r=") && !clientFinal.equals(SHA256_CLIENT_FINAL), clientFinal);
        AuthenticationException e = assertThrows(AuthenticationException.class, () -> scram.verifyServerFinal(bytes(SHA256_SERVER_FINAL)));
        assertTrue(e.getMessage().contains("SCRAM-SHA-256 signature does not match"), e.getMessage());
    }

    @Test
    void aForgedServerSignatureIsRejected() throws Exception {
        ScramClient scram = sha256();
        scram.clientFinal(bytes(SHA256_SERVER_FIRST));
        String forged = SHA256_SERVER_FINAL.replace("6rri", "6rrj");
        AuthenticationException e = assertThrows(AuthenticationException.class, () -> scram.verifyServerFinal(bytes(forged)));
        assertTrue(e.getMessage().contains("does not know this user's keys"), e.getMessage());
    }

    @Test
    void aServerErrorInTheFinalMessageIsReported() throws Exception {
        ScramClient scram = sha256();
        scram.clientFinal(bytes(SHA256_SERVER_FIRST));
        AuthenticationException e = assertThrows(AuthenticationException.class,
                () -> scram.verifyServerFinal(bytes("e=invalid-proof")));
        assertTrue(e.getMessage().contains("e=invalid-proof"), e.getMessage());
    }

    @Test
    void fewerThan4096IterationsAreRefused() throws Exception {
        ScramClient scram = sha256();
        AuthenticationException e = assertThrows(AuthenticationException.class,
                () -> scram.clientFinal(bytes(SHA256_SERVER_FIRST.replace("i=4096", "i=4095"))));
        assertTrue(e.getMessage().contains("4095 iterations, fewer than the minimum 4096"), e.getMessage());
    }

    /** RFC 5802's posit-number: ASCII digits without a sign; before, "+4096" and other scripts' digits were taken. */
    @ParameterizedTest
    @ValueSource(strings = {"+4096", "٤٠٩٦", "04096", "-4096", "99999999999", "4096x"})
    void anIterationCountThatIsNoPositiveNumberIsRefused(String count) {
        AuthenticationException e = assertThrows(AuthenticationException.class,
                () -> sha256().clientFinal(bytes(SHA256_SERVER_FIRST.replace("i=4096", "i=" + count))));
        assertEquals("the server's iteration count is not a positive number: i=" + count, e.getMessage());
    }

    @Test
    void aServerNonceThatDoesNotExtendTheClientsIsRefused() {
        ScramClient scram = sha256();
        AuthenticationException e = assertThrows(AuthenticationException.class,
                () -> scram.clientFinal(bytes(SHA256_SERVER_FIRST.replace("r=rOpr", "r=xOpr"))));
        assertTrue(e.getMessage().contains("nonce does not extend"), e.getMessage());
        assertThrows(AuthenticationException.class,
                () -> sha256().clientFinal(bytes("r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")), "the server added nothing");
    }

    @Test
    void malformedServerMessagesAreRefusedByName() {
        assertTrue(assertThrows(AuthenticationException.class, () -> sha256().clientFinal(bytes("m=ext," + SHA256_SERVER_FIRST)))
                .getMessage().contains("extension (m=)"));
        assertTrue(assertThrows(AuthenticationException.class,
                () -> sha256().clientFinal(bytes(SHA256_SERVER_FIRST.replace(",i=4096", "")))).getMessage().contains("lacks i="));
        assertTrue(assertThrows(AuthenticationException.class,
                () -> sha256().clientFinal(bytes("garbage"))).getMessage().contains("malformed SCRAM message"));
    }

    @Test
    void userNamesAreEscapedButNotSaslPrepped() {
        assertEquals("n,,n=a=3Db=2Cc,r=nonce", text(client(Mechanism.SCRAM_SHA_256, "a=b,c", "p", "nonce").clientFirst()));
        assertEquals("n,,n=\u2168,r=nonce", text(client(Mechanism.SCRAM_SHA_256, "\u2168", "p", "nonce").clientFirst()),
                "ROMAN NUMERAL NINE stays as it is in a user name");
    }

    @Test
    void scramSha256HashesTheSaslPreppedPassword() throws Exception {
        // "pen\u00ADcil" (a soft hyphen inside) is "pencil" after SASLprep: RFC 7677's proof again.
        ScramClient scram = client(Mechanism.SCRAM_SHA_256, "user", "pen\u00ADcil", "rOprNGfwEbeRWgbNEkqO");
        assertEquals(SHA256_CLIENT_FINAL, text(scram.clientFinal(bytes(SHA256_SERVER_FIRST))));
        // SCRAM-SHA-1 does not SASLprep: the soft hyphen is part of the digested password.
        assertTrue(!ScramClient.scramPassword(Mechanism.SCRAM_SHA_1, "user", "pen\u00ADcil")
                .equals(ScramClient.scramPassword(Mechanism.SCRAM_SHA_1, "user", "pencil")));
    }

    @Test
    void randomNoncesDifferAndHoldNoComma() {
        String a = text(ScramClient.start(Mechanism.SCRAM_SHA_256, "u", "p").clientFirst());
        String b = text(ScramClient.start(Mechanism.SCRAM_SHA_256, "u", "p").clientFirst());
        assertTrue(!a.equals(b), a);
        assertTrue(a.matches("n,,n=u,r=[A-Za-z0-9+/=]{32}"), a); // base64 of 24 bytes: printable, no comma
    }
}
