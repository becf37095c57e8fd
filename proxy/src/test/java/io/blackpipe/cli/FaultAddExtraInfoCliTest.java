package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** `fault add --extra-info JSON`: failCommand's errorExtraInfo from the command line, as the driver meets it; mistakes, exit 2. */
class FaultAddExtraInfoCliTest {

    @Test
    void theExtraInformationGivenOnTheCommandLineIsInTheErrorTheDriverSees() {
        String db = UpstreamLane.freshDatabaseName("cliExtra");
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            CliRun added = rig.run("fault", "add", "--command", "findAndModify", "--times", "1", "--error-code", "11000",
                    "--extra-info", "{\"keyPattern\": {\"sku\": 1}, \"keyValue\": {\"sku\": \"A1\"}}");
            assertEquals(0, added.exitCode(), added::toString);
            CliRun list = rig.run("fault", "list");
            assertTrue(list.out().contains("error=DuplicateKey(11000) extra=keyPattern,keyValue"), list::toString);
            try (MongoClient client = MongoClients.create(rig.proxy().connectionString())) {
                MongoCommandException e = assertThrows(MongoCommandException.class, () -> client.getDatabase(db).getCollection("c")
                        .findOneAndUpdate(Filters.eq("_id", 1), Updates.set("sku", "A1")));
                assertEquals(11000, e.getErrorCode());
                assertEquals(BsonDocument.parse("{sku: 'A1'}"), e.getResponse().getDocument("keyValue"));
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "--error-code 11000 --extra-info {sku:|--extra-info: not a JSON document",
            "--close --extra-info {\"a\":1}|--extra-info needs --error or --error-code",
            "--error-code 10107 --extra-info {\"a\":1}|error 10107 (NotWritablePrimary) carries no extra information",
            "--error-code 11000 --extra-info {\"code\":1}|'code' is the error reply's own field"})
    void aMistakenExtraInfoIsAUsageErrorAndNoRuleIsAdded(String flags, String message) {
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            List<String> args = new java.util.ArrayList<>(List.of("fault", "add", "--command", "findAndModify"));
            args.addAll(List.of(flags.split(" ")));
            CliRun run = rig.run(args.toArray(new String[0]));
            assertEquals(2, run.exitCode(), run::toString);
            assertTrue(run.err().contains(message), run::toString);
            assertEquals(List.of(), rig.ruleIds(), "nothing was added");
        }
    }
}
