package io.blackpipe.wire;

import static io.blackpipe.wire.WireFixtures.opMsg;
import static io.blackpipe.wire.WireFixtures.withBuf;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The mode a simulated secondary reads from a command: what the driver sent, or the primary it means without one. */
class ReadPreferenceTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "{find: 'c', $readPreference: {mode: 'secondaryPreferred'}, $db: 'd'}         | secondaryPreferred",
            "{find: 'c', $db: 'd', $readPreference: {tags: [{dc: 'a'}], mode: 'nearest'}} | nearest",
            "{find: 'c', $db: 'd'}                                                        | primary",
            "{find: 'c', $readPreference: 'secondary', $db: 'd'}                          | primary", // not a document
            "{find: 'c', $readPreference: {maxStalenessSeconds: 90}, $db: 'd'}            | primary", // no mode
            "{find: 'c', $readPreference: {mode: 2}, $db: 'd'}                            | primary", // a mode that is no string
    })
    void theModeOfTheReadPreferenceOrPrimary(String body, String mode) {
        assertEquals(mode, withBuf(opMsg(1, 0, 0).body(body).build(), buf -> ReadPreference.mode(buf, OpMsg.parse(buf))), body);
    }
}
