package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.ServerApi;
import com.mongodb.ServerApiVersion;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.UpstreamLane;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * An application whose client declares the Stable API (serverApi V1, as Atlas advises) sends apiVersion with every
 * command, configureFailPoint and waitForFailPoint included. mongod takes them (apiStrict false); so must the proxy,
 * and what it keeps as the rule is the failpoint, not the driver's generic fields.
 */
class StableApiFailPointDriverTest {
    private ProxyServer proxy;

    @BeforeEach
    void start() {
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
    }

    @AfterEach
    void stop() {
        proxy.close();
    }

    private MongoClient client(ServerApi serverApi) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(proxy.connectionString())).serverApi(serverApi).build());
    }

    @Test
    void aStableApiClientSetsAndWaitsForTheFailPoint() {
        try (MongoClient client = client(ServerApi.builder().version(ServerApiVersion.V1).build())) {
            Document reply = client.getDatabase("admin").runCommand(Document.parse(
                    "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['ping'], errorCode: 2}}"));
            assertEquals(0, reply.get("count", Number.class).intValue(), reply.toJson());
            String rule = proxy.rules().rules().get(0).document().toJson();
            assertFalse(rule.contains("apiVersion") || rule.contains("lsid") || rule.contains("$db"), rule);
            assertEquals(2, assertThrows(MongoCommandException.class,
                    () -> client.getDatabase("admin").runCommand(new Document("ping", 1))).getErrorCode());
            client.getDatabase("admin").runCommand(Document.parse("{waitForFailPoint: 'failCommand', timesEntered: 1, maxTimeMS: 1000}"));
            Document off = client.getDatabase("admin").runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: 'off'}"));
            assertEquals(1, off.get("count", Number.class).intValue(), off.toJson());
        }
    }

    @Test
    void apiStrictIsRefusedAsMongodRefusesItForACommandOutsideApiVersion1() {
        try (MongoClient client = client(ServerApi.builder().version(ServerApiVersion.V1).strict(true).build())) {
            MongoCommandException refused = assertThrows(MongoCommandException.class, () -> client.getDatabase("admin").runCommand(
                    Document.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['ping'], errorCode: 2}}")));
            assertEquals(323, refused.getErrorCode(), refused.getMessage());
            assertEquals("APIStrictError", refused.getErrorCodeName());
            assertEquals(0, proxy.rules().rules().size());
        }
    }

    /**
     * A client that writes the API fields itself (a test suite's runCommand, or a shell) can get them wrong; mongod
     * refuses such a command before running it, whatever it is, and so the failpoint stays as it was. The rule set
     * first must still be the only one.
     */
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "apiVersion: '1', apiStrict: 1            | 14      | 'APIParametersFromClient.apiStrict' is the wrong type 'int', expected type 'bool'",
            "apiVersion: '1', apiDeprecationErrors: 'no' | 14   | 'APIParametersFromClient.apiDeprecationErrors' is the wrong type 'string', expected type 'bool'",
            "apiVersion: 1                            | 14      | 'APIParametersFromClient.apiVersion' is the wrong type 'int', expected type 'string'",
            "apiStrict: false                         | 4886600 | without passing apiVersion",
            "apiVersion: '2'                          | 322     | API version must be \"1\"",
    })
    void malformedApiFieldsAreRefusedAsMongodRefusesThemAndTheFailPointStays(String apiFields, int code, String message) {
        try (MongoClient client = MongoClients.create(proxy.connectionString())) {
            client.getDatabase("admin").runCommand(Document.parse(
                    "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['ping'], errorCode: 2}}"));
            MongoCommandException refused = assertThrows(MongoCommandException.class, () -> client.getDatabase("admin").runCommand(
                    Document.parse("{configureFailPoint: 'failCommand', mode: 'off', " + apiFields + "}")));
            assertEquals(code, refused.getErrorCode(), refused.getMessage());
            assertTrue(refused.getErrorMessage().contains(message), refused.getErrorMessage());
            assertEquals(1, proxy.rules().rules().size(), "the failpoint set first stays");
            assertEquals(2, assertThrows(MongoCommandException.class,
                    () -> client.getDatabase("admin").runCommand(new Document("ping", 1))).getErrorCode());
        }
    }
}
