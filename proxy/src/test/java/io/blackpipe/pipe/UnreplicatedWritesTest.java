package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Collections;
import java.util.List;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;

class UnreplicatedWritesTest {
    private static List<UnreplicatedWrites.Change> created(int documents) {
        return Collections.nCopies(documents, new UnreplicatedWrites.Change("shop", "orders", new BsonInt32(1), null));
    }

    @Test
    void aWriteAcknowledgedWithMajorityEndsTheReachOfEveryWriteBeforeIt() {
        UnreplicatedWrites writes = new UnreplicatedWrites();
        writes.acknowledged(created(2), 0);
        writes.majorityAcknowledged(0);
        List<UnreplicatedWrites.Change> after = created(1);
        writes.acknowledged(after, 0);
        assertEquals(after, writes.takeForFailover(10_000).changes());
    }

    @Test
    void everyFailoverForgetsThemAndOneWithoutARollbackTakesNothing() {
        UnreplicatedWrites writes = new UnreplicatedWrites();
        writes.acknowledged(created(3), 0);
        assertEquals(UnreplicatedWrites.Taken.NOTHING, writes.takeForFailover(0));
        assertEquals(List.of(), writes.takeForFailover(10_000).changes(), "the failover before forgot them");
    }

    @Test
    void overItsLimitItForgetsTheOldestAndARollbackThatReachesThemSaysHowMany() {
        UnreplicatedWrites writes = new UnreplicatedWrites();
        writes.acknowledged(created(UnreplicatedWrites.MAX_DOCUMENTS), 0);
        List<UnreplicatedWrites.Change> newest = created(5);
        writes.acknowledged(newest, 0);
        UnreplicatedWrites.Taken taken = writes.takeForFailover(10_000);
        assertEquals(newest, taken.changes());
        assertEquals(UnreplicatedWrites.MAX_DOCUMENTS, taken.forgotten());
    }

    @Test
    void whatTheOldPrimaryAcknowledgesAfterAFailoverIsNoneOfTheNewPrimarysWrites() {
        UnreplicatedWrites writes = new UnreplicatedWrites();
        int old = writes.epoch();
        writes.takeForFailover(0);
        writes.acknowledged(created(2), old); // under way at the failover
        writes.majorityAcknowledged(old);
        List<UnreplicatedWrites.Change> newPrimarys = created(1);
        writes.acknowledged(newPrimarys, writes.epoch());
        assertEquals(newPrimarys, writes.takeForFailover(10_000).changes(), "the old primary's late majority write moved nothing either");
    }
}
