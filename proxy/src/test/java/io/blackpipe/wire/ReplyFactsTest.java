package io.blackpipe.wire;

import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.concat;
import static io.blackpipe.wire.WireFixtures.le32;
import static io.blackpipe.wire.WireFixtures.message;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static io.blackpipe.wire.WireFixtures.opReply;
import static io.blackpipe.wire.WireFixtures.withBuf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What the counters and the history read from a reply: read from frames laid out as a server sends them. */
class ReplyFactsTest {
    private static ReplyFacts ofOpMsg(int flags, String body) {
        return withBuf(opMsg(1, 2, flags).body(body).build(), ReplyFacts::of);
    }

    @Test
    void aSuccessIsOkWithNothingElse() {
        ReplyFacts facts = ofOpMsg(0, "{cursor: {id: 0, ns: 'd.c', firstBatch: []}, ok: 1.0}");
        assertEquals(new ReplyFacts(true, 0, false, false, false, 0, -1, 0), facts);
        assertFalse(facts.isError());
    }

    @Test
    void aCommandErrorIsNotOkAndCarriesItsCode() {
        ReplyFacts facts = ofOpMsg(0, "{ok: 0.0, errmsg: 'not primary', code: 10107, codeName: 'NotWritablePrimary'}");
        assertFalse(facts.ok());
        assertEquals(10107, facts.code());
        assertTrue(facts.isError());
        assertFalse(facts.writeConcernError());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "{ok: 1}                           | true",
            "{ok: {$numberLong: '1'}}          | true",
            "{ok: 1.0}                         | true",
            "{ok: 0}                           | false",
            "{ok: 0.5}                         | false",
            "{ok: '1'}                         | false", // not a number: no ok
            "{ok: true}                        | false",
            "{n: 1}                            | false", // no ok at all
    })
    void okIsTheNumberOne(String body, boolean ok) {
        assertEquals(ok, ofOpMsg(0, body).ok(), body);
    }

    @Test
    void fieldsOfAnotherTypeAreNotRead() {
        ReplyFacts facts = ofOpMsg(0, "{ok: 0, code: 'eleven', n: 'many', writeConcernError: 'late', writeErrors: {code: 11000}}");
        assertEquals(new ReplyFacts(false, 0, false, false, false, 0, -1, 0), facts);
    }

    @Test
    void aWriteConcernErrorMakesAnOkReplyAnErrorWithTheErrorsCode() {
        ReplyFacts facts = ofOpMsg(0, "{n: 1, writeConcernError: {code: 64, codeName: 'WriteConcernFailed', errmsg: 'waiting'}, ok: 1}");
        assertTrue(facts.ok());
        assertTrue(facts.writeConcernError());
        assertTrue(facts.isError());
        assertEquals(0, facts.code(), "no top-level code");
        assertEquals(64, facts.writeConcernErrorCode());
        assertEquals(1, facts.n());
        ReplyFacts noCode = ofOpMsg(0, "{writeConcernError: {errmsg: 'waiting', code: 'x'}, ok: 1}");
        assertTrue(noCode.writeConcernError());
        assertEquals(0, noCode.writeConcernErrorCode());
    }

    @Test
    void writeErrorsAreReadFromTheFirstOfThem() {
        ReplyFacts facts = ofOpMsg(0, "{n: 0, writeErrors: [{index: 0, code: 11000, errmsg: 'E11000 duplicate key'},"
                + " {index: 1, code: 121}], ok: 1}");
        assertTrue(facts.ok());
        assertFalse(facts.isError(), "ok: 1 with writeErrors is the command's success");
        assertTrue(facts.writeErrors());
        assertEquals(11000, facts.writeErrorCode());
        assertEquals(0, facts.n());
        ReplyFacts partly = ofOpMsg(0, "{n: {$numberLong: '3'}, writeErrors: [{index: 3, errmsg: 'no code'}], ok: 1}");
        assertTrue(partly.writeErrors());
        assertEquals(0, partly.writeErrorCode());
        assertEquals(3, partly.n());
        ReplyFacts none = ofOpMsg(0, "{n: 2, writeErrors: [], ok: 1}");
        assertFalse(none.writeErrors(), "an empty array refuses nothing");
        ReplyFacts notADocument = ofOpMsg(0, "{n: 0, writeErrors: [11000], ok: 1}");
        assertTrue(notADocument.writeErrors());
        assertEquals(0, notADocument.writeErrorCode());
    }

    @Test
    void moreToComeIsTheOpMsgFlag() {
        assertTrue(ofOpMsg(OpMsg.MORE_TO_COME, "{ok: 1}").moreToCome());
        assertFalse(ofOpMsg(OpMsg.CHECKSUM_PRESENT, "{ok: 1}").moreToCome());
    }

    @Test
    void anOpReplyIsReadFromItsFirstDocument() {
        byte[] error = opReply(5, 4, 0, 0L, 0, 1, bson("{ok: 0, code: 13, errmsg: 'unauthorized'}"));
        ReplyFacts facts = withBuf(error, ReplyFacts::of);
        assertFalse(facts.ok());
        assertEquals(13, facts.code());
        assertFalse(facts.moreToCome());
        byte[] two = opReply(5, 4, 0, 0L, 0, 2, bson("{ok: 0, code: 18}"), bson("{ok: 1}"));
        assertEquals(18, withBuf(two, ReplyFacts::of).code(), "the first of several");
        byte[] hello = opReply(5, 4, 0, 0L, 0, 1, bson("{ismaster: true, ok: 1.0}"));
        assertTrue(withBuf(hello, ReplyFacts::of).ok());
    }

    @Test
    void aReplyWithoutADocumentToReadIsCountedAsDelivered() {
        ReplyFacts opaque = new ReplyFacts(true, 0, false, false, false, 0, -1, 0);
        assertEquals(opaque, withBuf(opReply(5, 4, 0, 0L, 0, 0), ReplyFacts::of), "an OP_REPLY returning no document");
        byte[] compressed = message(6, 5, OpCode.OP_COMPRESSED, concat(le32(OpCode.OP_MSG), le32(100), new byte[] {0}, bson("{ok: 0}")));
        assertEquals(opaque, withBuf(compressed, ReplyFacts::of), "OP_COMPRESSED is not looked into");
    }
}
