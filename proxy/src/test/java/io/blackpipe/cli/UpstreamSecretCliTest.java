package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.BlackPipe;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.topology.UpstreamUriSecretsTest;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the user sees of a malformed --upstream URI holding a password: a usage error (exit 2) naming
 * what is wrong, from every command and API that takes one, with no piece of the password in its
 * output or in the log. The passwords are those of {@link UpstreamUriSecretsTest}.
 */
class UpstreamSecretCliTest {
    @ParameterizedTest
    @ValueSource(strings = {
            "mongodb://user:Kq3v/Zw8p@db1:27017/?replicaSet=rs0",
            "mongodb://user:27/Zw8p@db1/admin",
            "mongodb://user:Kq3v?Zw8p@db1/",
            "mongodb://user:27?authMechanism=Zw8p@db1/",
            "mongodb://user:Kq3v%Zw8p@db1/",
            "mongodb:/user:Kq3v/Zw8p@db1/"})
    void aMalformedUpstreamWithAPasswordIsAUsageErrorThatShowsNoPieceOfIt(String uri) throws Exception {
        try (LogCapture log = LogCapture.start()) {
            for (List<String> args : List.of(List.of("proxy", "--upstream", uri, "--port", "0", "--admin-port", "-1"),
                    List.of("report", "--upstream", uri, "--iterations", "1"),
                    List.of("report", "--spec", "--upstream", uri))) {
                CliRun run = CliRun.of(args.toArray(new String[0]));
                assertEquals(2, run.exitCode(), run::toString);
                assertTrue(run.err().startsWith("the upstream URI"), run::toString);
                assertTrue(run.err().contains("Usage: blackpipe " + args.get(0)), run::toString);
                UpstreamUriSecretsTest.assertShowsNoSecret(run.out() + run.err());
            }
            IllegalArgumentException api = assertThrows(IllegalArgumentException.class, () -> BlackPipe.start(uri));
            UpstreamUriSecretsTest.assertShowsNoSecret(String.valueOf(api.getMessage()) + api.getCause());
            log.messages().forEach(UpstreamUriSecretsTest::assertShowsNoSecret);
        }
    }
}
