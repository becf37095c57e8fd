package io.blackpipe.fault;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/** A driver test with a fresh {@link DriverRig} per test, its databases named after the test method. */
abstract class DriverRigTest {
    DriverRig rig;

    @BeforeEach
    void startRig(TestInfo test) {
        rig = new DriverRig(test.getTestMethod().orElseThrow().getName());
    }

    @AfterEach
    void stopRig() {
        rig.close();
    }
}
