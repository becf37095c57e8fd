package io.blackpipe.wire;

import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static io.blackpipe.wire.WireFixtures.opQuery;
import static io.blackpipe.wire.WireFixtures.withBuf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.UUID;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CommandFactsTest {
    /** Sixteen distinct bytes, so that any byte-order mistake changes the UUID. */
    private static final byte[] LSID_BYTES = {
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
        (byte) 0x88, (byte) 0x99, (byte) 0xAA, (byte) 0xBB, (byte) 0xCC, (byte) 0xDD, (byte) 0xEE, (byte) 0xFF};

    private static CommandFacts ofOpMsg(byte[] frame) {
        return withBuf(frame, buf -> CommandFacts.ofOpMsg(buf, OpMsg.parse(buf)));
    }

    private static CommandFacts ofOpQuery(byte[] frame) {
        return withBuf(frame, buf -> CommandFacts.ofOpQuery(buf, OpQuery.parse(buf)));
    }

    private static BsonDocument lsid(byte subtype, byte[] bytes) {
        return new BsonDocument("id", new BsonBinary(subtype, bytes));
    }

    @Test
    void transactionalInsertWithDocumentSequence() {
        BsonDocument body = new BsonDocument()
                .append("insert", new BsonString("orders"))
                .append("ordered", BsonBoolean.TRUE)
                .append("lsid", lsid(BsonBinarySubType.UUID_STANDARD.getValue(), LSID_BYTES))
                .append("txnNumber", new BsonInt64(7))
                .append("startTransaction", BsonBoolean.TRUE)
                .append("autocommit", BsonBoolean.FALSE)
                .append("$db", new BsonString("shop"));
        byte[] frame = opMsg(4242, 0, 0).body(bson(body)).sequence("documents", bson("{_id: 1}"), bson("{_id: 2}")).build();
        CommandFacts facts = ofOpMsg(frame);

        ByteBuffer be = ByteBuffer.wrap(LSID_BYTES);
        UUID expected = new UUID(be.getLong(), be.getLong());
        assertEquals(UUID.fromString("00112233-4455-6677-8899-aabbccddeeff"), expected, "fixture sanity");

        assertEquals(4242, facts.requestId());
        assertEquals(OpCode.OP_MSG, facts.opCode());
        assertEquals("insert", facts.name());
        assertEquals("orders", facts.collection());
        assertEquals("shop", facts.database());
        assertEquals(expected, facts.lsid());
        assertEquals(7, facts.txnNumber());
        assertTrue(facts.hasTxnNumber());
        assertTrue(facts.inTransaction());
        assertFalse(facts.handshake());
        assertFalse(facts.isHello());
        assertFalse(facts.compressionRequested());
        assertNull(facts.appName());
        assertEquals(0, facts.flags());
    }

    /** Sent to admin, these name the namespace mongod (or mongos) gives them, explain its command's; every other command's is $db's. */
    @Test
    void aCommandThatNamesItsNamespaceHasThatOneWhateverItsDb() {
        String[][] cases = {
            {"{renameCollection: 'shop.orders', to: 'shop.archive', $db: 'admin'}", "shop", "orders"},
            {"{shardCollection: 'shop.orders.eu', key: {_id: 1}, $db: 'admin'}", "shop", "orders.eu"},
            {"{enableSharding: 'shop', $db: 'admin'}", "shop", ""},
            {"{datasize: 'shop.orders', $db: 'shop'}", "shop", "orders"},
            {"{updateZoneKeyRange: 'shop.orders', min: {}, max: {}, zone: 'eu', $db: 'admin'}", "shop", "orders"},
            {"{renameCollection: 1, $db: 'admin'}", "admin", ""},
            {"{find: 'orders', $db: 'shop'}", "shop", "orders"},
            {"{getParameter: 'shop.orders', $db: 'admin'}", "admin", ""},
            {"{explain: {find: 'orders', filter: {}}, verbosity: 'queryPlanner', $db: 'shop'}", "shop", "orders"},
            {"{explain: {getMore: 1, collection: 'orders'}, $db: 'shop'}", "shop", ""},
        };
        for (String[] c : cases) {
            CommandFacts facts = ofOpMsg(opMsg(1, 0, 0).body(bson(BsonDocument.parse(c[0]))).build());
            assertEquals(c[1], facts.namespaceDatabase(), c[0]);
            assertEquals(c[2], facts.namespaceCollection(), c[0]);
        }
    }

    @Test
    void txnNumberAsInt32IsRead() {
        byte[] frame = opMsg(1, 0, 0).body(bson(new BsonDocument()
                .append("update", new BsonString("c"))
                .append("txnNumber", new BsonInt32(3))
                .append("$db", new BsonString("d")))).build();
        CommandFacts facts = ofOpMsg(frame);
        assertEquals(3, facts.txnNumber());
        assertTrue(facts.hasTxnNumber());
        assertFalse(facts.inTransaction(), "a retryable write is not a transaction");
    }

    @Test
    void txnNumberZeroIsATransactionNumberAndNoFingerprintIsTaken() {
        BsonDocument insert = new BsonDocument("insert", new BsonString("c"))
                .append("lsid", lsid(BsonBinarySubType.UUID_STANDARD.getValue(), LSID_BYTES)).append("$db", new BsonString("d"));
        CommandScanner scanner = new CommandScanner();
        byte[] withoutTxn = opMsg(9, 0, 0).body(bson(insert)).build();
        assertTrue(withBuf(withoutTxn, buf -> scanner.ofOpMsg(buf, OpMsg.parse(buf))).fingerprint() != 0,
                "without a txnNumber a session's re-sent command is told by its fingerprint");
        byte[] withTxnZero = opMsg(10, 0, 0).body(bson(insert.clone().append("txnNumber", new BsonInt64(0)))).build();
        CommandFacts facts = withBuf(withTxnZero, buf -> scanner.ofOpMsg(buf, OpMsg.parse(buf)));
        assertTrue(facts.hasTxnNumber(), "0 is a transaction number (drivers start at 1; the server takes 0)");
        assertEquals(0, facts.fingerprint(), "a retry is told by its txnNumber: no fingerprint is taken");
    }

    @Test
    void largeInt64TxnNumberIsKept() {
        byte[] frame = opMsg(1, 0, 0).body(bson(new BsonDocument()
                .append("delete", new BsonString("c"))
                .append("txnNumber", new BsonInt64(5_000_000_000L)))).build();
        assertEquals(5_000_000_000L, ofOpMsg(frame).txnNumber());
    }

    @Test
    void commandWithoutSessionFields() {
        CommandFacts facts = ofOpMsg(opMsg(2, 0, 0).body("{find: 'users', filter: {a: 1}, $db: 'app'}").build());
        assertEquals("find", facts.name());
        assertEquals("users", facts.collection());
        assertEquals("app", facts.database());
        assertNull(facts.lsid());
        assertEquals(-1, facts.txnNumber());
        assertFalse(facts.hasTxnNumber());
        assertFalse(facts.inTransaction());
    }

    @Test
    void autocommitTrueIsNotATransaction() {
        CommandFacts facts = ofOpMsg(opMsg(2, 0, 0).body("{find: 'c', autocommit: true, $db: 'd'}").build());
        assertFalse(facts.inTransaction());
    }

    @Test
    void firstElementNotAStringLeavesCollectionEmpty() {
        CommandFacts facts = ofOpMsg(opMsg(3, 0, 0).body("{ping: 1, $db: 'admin'}").build());
        assertEquals("ping", facts.name());
        assertEquals("", facts.collection());
        assertEquals("admin", facts.database());
    }

    @Test
    void getMoreTakesItsCollectionFromTheCollectionField() {
        CommandFacts facts = ofOpMsg(opMsg(3, 0, 0).body("{getMore: {$numberLong: '42'}, collection: 'c', batchSize: 2, $db: 'd'}").build());
        assertEquals("getMore", facts.name());
        assertEquals("c", facts.collection());
        assertEquals("d", facts.database());
        // only getMore names its collection in a field of that name
        assertEquals("", ofOpMsg(opMsg(4, 0, 0).body("{ping: 1, collection: 'c', $db: 'd'}").build()).collection());
    }

    @Test
    void missingDbGivesAnEmptyDatabase() {
        CommandFacts facts = ofOpMsg(opMsg(3, 0, 0).body("{ping: 1}").build());
        assertEquals("", facts.database());
    }

    @Test
    void lsidThatIsNotSixteenBytesIsIgnored() {
        byte[] frame = opMsg(4, 0, 0).body(bson(new BsonDocument()
                .append("find", new BsonString("c"))
                .append("lsid", lsid((byte) 4, new byte[8])))).build();
        assertNull(ofOpMsg(frame).lsid());
    }

    @Test
    void lsidWithoutIdIsIgnored() {
        byte[] frame = opMsg(4, 0, 0).body("{find: 'c', lsid: {uid: 1}}").build();
        assertNull(ofOpMsg(frame).lsid());
    }

    @Test
    void lsidAfterNestedSkippedFieldsIsStillFound() {
        byte[] frame = opMsg(4, 0, 0).body(bson(new BsonDocument()
                .append("aggregate", new BsonString("c"))
                .append("pipeline", BsonArray.parse("[{$match: {x: {$regex: 'a.*', $options: 'i'}}}, {$limit: 5}]"))
                .append("cursor", new BsonDocument())
                .append("lsid", lsid((byte) 4, LSID_BYTES))
                .append("$db", new BsonString("d")))).build();
        assertEquals(UUID.fromString("00112233-4455-6677-8899-aabbccddeeff"), ofOpMsg(frame).lsid());
    }

    @ParameterizedTest
    @ValueSource(strings = {"hello", "isMaster", "ismaster"})
    void helloWithClientMetadataIsAHandshake(String name) {
        BsonDocument body = new BsonDocument(name, new BsonInt32(1))
                .append("helloOk", BsonBoolean.TRUE)
                .append("client", BsonDocument.parse(
                        "{driver: {name: 'mongo-java-driver', version: '5.1'}, os: {type: 'Linux'},"
                        + " application: {name: 'checkout-service'}}"))
                .append("compression", BsonArray.parse("['snappy', 'zstd']"))
                .append("$db", new BsonString("admin"));
        CommandFacts facts = ofOpMsg(opMsg(5, 0, 0).body(bson(body)).build());
        assertEquals(name, facts.name());
        assertTrue(facts.isHello());
        assertTrue(facts.handshake());
        assertEquals("checkout-service", facts.appName());
        assertTrue(facts.compressionRequested());
        assertEquals("admin", facts.database());
    }

    @Test
    void helloWithoutClientIsAMonitoringHelloNotAHandshake() {
        CommandFacts facts = ofOpMsg(opMsg(6, 0, OpMsg.EXHAUST_ALLOWED)
                .body("{hello: 1, topologyVersion: {processId: {$oid: '0102030405060708090a0b0c'}, counter: {$numberLong: '3'}},"
                        + " maxAwaitTimeMS: 10000, $db: 'admin'}")
                .build());
        assertTrue(facts.isHello());
        assertFalse(facts.handshake());
        assertTrue(facts.exhaustAllowed());
        assertFalse(facts.moreToCome());
        assertNull(facts.appName());
    }

    @Test
    void otherCommandWithClientIsNotAHandshake() {
        CommandFacts facts = ofOpMsg(opMsg(6, 0, 0).body("{ping: 1, client: {application: {name: 'x'}}}").build());
        assertFalse(facts.isHello());
        assertFalse(facts.handshake());
    }

    @Test
    void handshakeWithoutApplicationHasNoAppName() {
        CommandFacts facts = ofOpMsg(opMsg(7, 0, 0).body("{hello: 1, client: {driver: {name: 'd', version: '1'}}}").build());
        assertTrue(facts.handshake());
        assertNull(facts.appName());
        assertFalse(facts.compressionRequested());
    }

    @Test
    void applicationNameThatIsNotAStringIsIgnored() {
        CommandFacts facts = ofOpMsg(opMsg(7, 0, 0).body("{hello: 1, client: {application: {name: 5}}}").build());
        assertTrue(facts.handshake());
        assertNull(facts.appName());
    }

    @Test
    void emptyCompressorListIsNoCompressionRequest() {
        CommandFacts facts = ofOpMsg(opMsg(8, 0, 0).body("{hello: 1, client: {}, compression: []}").build());
        assertTrue(facts.handshake());
        assertFalse(facts.compressionRequested());
    }

    @Test
    void moreToComeAndExhaustFlagsOfOpMsgAreReported() {
        CommandFacts facts = ofOpMsg(opMsg(9, 0, OpMsg.MORE_TO_COME).body("{insert: 'c', writeConcern: {w: 0}}").build());
        assertTrue(facts.moreToCome());
        assertFalse(facts.exhaustAllowed());
        assertEquals(OpMsg.MORE_TO_COME, facts.flags());
    }

    // ------------------------------------------------------------------ OP_QUERY

    @Test
    void legacyHandshakeOverOpQuery() {
        byte[] query = bson(new BsonDocument("isMaster", new BsonInt32(1))
                .append("helloOk", BsonBoolean.TRUE)
                .append("client", BsonDocument.parse("{application: {name: 'legacy-app'}, driver: {name: 'd', version: '1'}}"))
                .append("compression", BsonArray.parse("['zlib']")));
        CommandFacts facts = ofOpQuery(opQuery(77, 0, "admin.$cmd", 0, -1, query, null));
        assertEquals(77, facts.requestId());
        assertEquals(OpCode.OP_QUERY, facts.opCode());
        assertEquals("isMaster", facts.name());
        assertEquals("admin", facts.database());
        assertTrue(facts.handshake());
        assertEquals("legacy-app", facts.appName());
        assertTrue(facts.compressionRequested());
    }

    @Test
    void legacyQueryWrapperIsLookedInto() {
        byte[] query = bson(new BsonDocument("$query", new BsonDocument("ismaster", new BsonInt32(1))
                .append("client", BsonDocument.parse("{application: {name: 'wrapped'}}")))
                .append("$readPreference", BsonDocument.parse("{mode: 'primaryPreferred'}")));
        CommandFacts facts = ofOpQuery(opQuery(78, 4, "admin.$cmd", 0, 1, query, null));
        assertEquals("ismaster", facts.name());
        assertEquals("admin", facts.database());
        assertTrue(facts.handshake());
        assertEquals("wrapped", facts.appName());
        assertFalse(facts.compressionRequested());
        assertEquals(4, facts.flags());
    }

    @Test
    void opQueryFlagBitOneIsNotMoreToCome() {
        // bit 1 of OP_QUERY flags is TailableCursor; moreToCome/exhaustAllowed are OP_MSG-only notions
        CommandFacts facts = ofOpQuery(opQuery(79, OpMsg.MORE_TO_COME | OpMsg.EXHAUST_ALLOWED, "test.$cmd", 0, -1,
                bson("{count: 'things'}"), null));
        assertFalse(facts.moreToCome());
        assertFalse(facts.exhaustAllowed());
        assertEquals("count", facts.name());
        assertEquals("things", facts.collection());
        assertEquals("test", facts.database());
    }

    @Test
    void dollarDbInsideAnOpQueryOverridesTheCollectionDatabase() {
        CommandFacts facts = ofOpQuery(opQuery(80, 0, "admin.$cmd", 0, -1, bson("{ping: 1, $db: 'other'}"), null));
        assertEquals("other", facts.database());
    }

    @Test
    void isHelloNameIsCaseExactForTheThreeSpellings() {
        assertTrue(CommandFacts.isHelloName("hello"));
        assertTrue(CommandFacts.isHelloName("isMaster"));
        assertTrue(CommandFacts.isHelloName("ismaster"));
        assertFalse(CommandFacts.isHelloName("Hello"));
        assertFalse(CommandFacts.isHelloName("ISMASTER"));
        assertFalse(CommandFacts.isHelloName(""));
    }

    @Test
    void anAggregateOpensAChangeStreamWhenItsFirstStageIsChangeStream() {
        assertTrue(ofOpMsg(opMsg(1, 0, 0).body(bson("{aggregate: 'c', pipeline: [{$changeStream: {}}, {$match: {x: 1}}],"
                + " cursor: {}, $db: 'd'}")).build()).changeStream());
        assertTrue(ofOpMsg(opMsg(1, 0, 0).body(bson("{aggregate: 1, pipeline: [{$changeStream: {allChangesForCluster: true}}],"
                + " cursor: {}, $db: 'admin'}")).build()).changeStream(), "a database's or the cluster's");
        assertFalse(ofOpMsg(opMsg(1, 0, 0).body(bson("{aggregate: 'c', pipeline: [{$match: {x: 1}}, {$changeStream: {}}],"
                + " cursor: {}, $db: 'd'}")).build()).changeStream(), "only as the first stage");
        assertFalse(ofOpMsg(opMsg(1, 0, 0).body(bson("{aggregate: 'c', pipeline: [], cursor: {}, $db: 'd'}")).build()).changeStream());
        assertFalse(ofOpMsg(opMsg(1, 0, 0).body(bson("{find: 'c', pipeline: [{$changeStream: {}}], $db: 'd'}")).build())
                .changeStream(), "only an aggregate");
    }

    @Test
    void anAggregateNamesTheFirstStagesTheProxyTellsApart() {
        assertEquals("$listSearchIndexes", ofOpMsg(opMsg(1, 0, 0).body(bson("{aggregate: 'c', pipeline: [{$listSearchIndexes: {}}],"
                + " cursor: {}, $db: 'd'}")).build()).firstStage());
        assertEquals("", ofOpMsg(opMsg(1, 0, 0).body(bson("{aggregate: 'c', pipeline: [{$match: {}}, {$listSearchIndexes: {}}],"
                + " cursor: {}, $db: 'd'}")).build()).firstStage(), "the first stage only, and only one the proxy tells apart");
        assertEquals("", ofOpMsg(opMsg(1, 0, 0).body(bson("{aggregate: 'c', pipeline: [], cursor: {}, $db: 'd'}")).build()).firstStage());
        assertEquals("", ofOpMsg(opMsg(1, 0, 0).body(bson("{aggregate: 'c', pipeline: [{}], cursor: {}, $db: 'd'}")).build()).firstStage(),
                "an empty stage names none");
        assertEquals("", ofOpMsg(opMsg(1, 0, 0).body(bson("{find: 'c', pipeline: [{$match: {}}], $db: 'd'}")).build()).firstStage(),
                "only an aggregate");
    }
}
