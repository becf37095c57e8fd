package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * A put-back the node refused was logged with its whole reply: an E11000's errmsg and keyValue carry the documents' key
 * values (customer data). The line says the code and codeName, and the namespace, alone.
 */
class WriteRollbackRefusalTest {
    @Test
    void aDuplicateKeyRefusalSaysItsCodeNotTheKeyValues() {
        BsonDocument reply = BsonDocument.parse("{n: 0, writeErrors: [{index: 0, code: 11000, keyPattern: {email: 1},"
                + " keyValue: {email: 'alice@example.com'}, errmsg: 'E11000 duplicate key error collection: shop.users index: email_1"
                + " dup key: { email: \"alice@example.com\" }'}, {index: 1, code: 11000, keyValue: {email: 'bob@example.com'},"
                + " errmsg: 'E11000 ... bob@example.com'}], ok: 1}");
        assertEquals("update on shop.users refused: code 11000 (DuplicateKey) (first of 2 write errors)",
                WriteRollback.refusal("update", "shop.users", reply));
    }

    @Test
    void aCommandErrorSaysItsCodeAndCodeName() {
        BsonDocument reply = BsonDocument.parse("{ok: 0, code: 13, codeName: 'Unauthorized', errmsg: 'not authorized on shop to execute"
                + " command { delete: \"users\", deletes: [ { q: { _id: { $in: [ \"alice@example.com\" ] } } } ] }'}");
        assertEquals("delete on shop.users refused: code 13 (Unauthorized)", WriteRollback.refusal("delete", "shop.users", reply));
        assertEquals("delete on shop.users refused: no error code", WriteRollback.refusal("delete", "shop.users", BsonDocument.parse("{ok: 0}")));
    }
}
