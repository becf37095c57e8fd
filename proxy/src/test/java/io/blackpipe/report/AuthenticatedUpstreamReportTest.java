package io.blackpipe.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedScramServer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `report --upstream 'mongodb://user:pw@…'` against a deployment with access control: the report's
 * app connects through blackpipe, so it must authenticate as the URI's user (apps authenticate end to
 * end through the proxy), or every operation is refused (Unauthorized) before any fault is judged.
 */
class AuthenticatedUpstreamReportTest {
    @Test
    void theReportsAppCarriesTheUpstreamUrisCredentialsToTheProxy() {
        String proxy = "mongodb://127.0.0.1:1,127.0.0.1:2/?replicaSet=rs0";
        assertEquals(proxy, ReportRunner.withUpstreamCredentials(proxy, "mongodb://db1:27017/?replicaSet=rs0"), "no credentials: as it is");
        assertEquals("mongodb://alice:p%40ss%2Fw%20rd@127.0.0.1:1,127.0.0.1:2/?replicaSet=rs0&authSource=admin",
                ReportRunner.withUpstreamCredentials(proxy, "mongodb://alice:p%40ss%2Fw%20rd@db1:27017/?replicaSet=rs0"));
        assertEquals("mongodb://carol:pw@127.0.0.1:1/?authSource=app&authMechanism=SCRAM-SHA-1",
                ReportRunner.withUpstreamCredentials("mongodb://127.0.0.1:1/", "mongodb://carol:pw@db1/app?authMechanism=SCRAM-SHA-1"),
                "the source the upstream URI's path gave, made explicit");
    }

    /** An AWS session token or a Kerberos service name is part of the credential: without it the app cannot log in. */
    @Test
    void theCredentialsMechanismPropertiesGoAlong() {
        assertEquals("mongodb://AKIA:secret@127.0.0.1:1/?authSource=%24external&authMechanism=MONGODB-AWS"
                        + "&authMechanismProperties=AWS_SESSION_TOKEN:tok%2Ben",
                ReportRunner.withUpstreamCredentials("mongodb://127.0.0.1:1/",
                        "mongodb://AKIA:secret@db1/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:tok%2Ben"));
    }

    @Test
    void theSpecCheckAuthenticatesItsDriverAsTheUpstreamUrisUser() throws Exception {
        ScriptedScramServer users = ScriptedScramServer.builder().user("admin", "alice", "s3cret").build();
        try (ScriptedMongod scripted = ScriptedMongod.builder().accessControl(users).start()) {
            String upstream = "mongodb://alice:s3cret@" + scripted.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME;
            List<SpecCase> cases = List.of(
                    new SpecCase("retryable write", "insert", "insert", 10107, 1, true),
                    new SpecCase("never retried", "getMore", "getMore", null, 1, false));
            SpecCheck check = SpecCheck.run(upstream, "scripted with access control", SpecDriver.bundledJava(), line -> { }, cases);
            SpecResult insert = check.results().get(0);
            assertEquals("ok", insert.raised(), "the retried insert went through, authenticated: " + check.text());
            assertTrue(insert.matches(), check.text());
            SpecResult getMore = check.results().get(1);
            assertEquals(1, getMore.attempts(), "the find was allowed, so its getMore met the fault: " + check.text());
            assertTrue(check.allMatch(), check.text());
            assertTrue(!check.text().contains("s3cret"), "the password is not in the report");
        }
    }

    /** A --driver-cmd program whose last line is its connection string: the report shows it with the password masked. */
    @Test
    void anExternalProgramsOutputShowsTheUpstreamPasswordMasked(@TempDir Path dir) throws Exception {
        ScriptedScramServer users = ScriptedScramServer.builder().user("admin", "alice", "s3cret").build();
        try (ScriptedMongod scripted = ScriptedMongod.builder().accessControl(users).start()) {
            String upstream = "mongodb://alice:s3cret@" + scripted.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME;
            Path script = ExternalSpecDriverTest.shellDriver(dir, "echo \"cannot connect to $1\"\nexit 1\n");
            SpecCheck check = SpecCheck.run(upstream, "scripted with access control", SpecDriver.external(script.toString()), line -> { },
                    List.of(new SpecCase("retryable read", "find", "find", 10107, 1, true)));
            String raised = check.results().get(0).raised();
            assertTrue(raised.startsWith("exit 1: cannot connect to mongodb://alice:****@127.0.0.1:"), raised);
            for (String report : List.of(check.text(), check.markdown(), check.json())) {
                assertFalse(report.contains("s3cret"), report);
            }
            assertTrue(check.json().contains("\"raised\": \"exit 1: cannot connect to mongodb://alice:****@"), check.json());
        }
    }
}
