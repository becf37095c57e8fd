package io.blackpipe.report;

import com.mongodb.MongoException;
import com.mongodb.MongoNodeIsRecoveringException;
import com.mongodb.MongoNotPrimaryException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;

/** How the strategies tell errors apart, as an application can: by exception type and label. */
final class Failures {
    private Failures() {
    }

    /** A network error (reset, closed, timed out, no server reachable): the write may or may not have happened. */
    static boolean isNetwork(Throwable e) {
        return e instanceof MongoSocketException || e instanceof MongoTimeoutException;
    }

    /** Network errors plus the state changes of a failover: worth retrying after a moment. */
    static boolean isTransient(Throwable e) {
        return isNetwork(e) || e instanceof MongoNotPrimaryException || e instanceof MongoNodeIsRecoveringException
                || e instanceof MongoException m && m.hasErrorLabel("RetryableWriteError");
    }
}
