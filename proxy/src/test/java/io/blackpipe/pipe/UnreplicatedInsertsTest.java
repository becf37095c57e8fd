package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Collections;
import java.util.List;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

class UnreplicatedInsertsTest {
    private static SimulatedWrite insert(int documents) {
        return new SimulatedWrite("shop", "orders", Collections.nCopies(documents, (BsonValue) new BsonInt32(1)), true);
    }

    @Test
    void aWriteAcknowledgedWithMajorityEndsTheReachOfEveryInsertBeforeIt() {
        UnreplicatedInserts inserts = new UnreplicatedInserts();
        inserts.acknowledged(insert(2));
        inserts.acknowledged(SimulatedWrite.MAJORITY);
        SimulatedWrite after = insert(1);
        inserts.acknowledged(after);
        assertEquals(List.of(after), inserts.takeForFailover(10_000).inserts());
    }

    @Test
    void everyFailoverForgetsThemAndOneWithoutARollbackTakesNothing() {
        UnreplicatedInserts inserts = new UnreplicatedInserts();
        inserts.acknowledged(insert(3));
        assertEquals(UnreplicatedInserts.Taken.NOTHING, inserts.takeForFailover(0));
        assertEquals(List.of(), inserts.takeForFailover(10_000).inserts(), "the failover before forgot them");
    }

    @Test
    void overItsLimitItForgetsTheOldestAndARollbackThatReachesThemSaysHowMany() {
        UnreplicatedInserts inserts = new UnreplicatedInserts();
        inserts.acknowledged(insert(UnreplicatedInserts.MAX_DOCUMENTS));
        SimulatedWrite newest = insert(5);
        inserts.acknowledged(newest);
        UnreplicatedInserts.Taken taken = inserts.takeForFailover(10_000);
        assertEquals(List.of(newest), taken.inserts());
        assertEquals(UnreplicatedInserts.MAX_DOCUMENTS, taken.forgotten());
    }
}
