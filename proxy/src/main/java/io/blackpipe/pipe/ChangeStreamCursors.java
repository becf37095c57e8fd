package io.blackpipe.pipe;

import io.blackpipe.topology.MemberAddress;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The change stream cursors members opened through the proxy: a getMore of one is a change
 * stream read, whose resumable errors mongod labels ResumableChangeStreamError (it knows the
 * getMore's originating aggregate; the proxy remembers it here). Only the most recent ones are
 * kept: cursor ids are random 64-bit numbers, so a forgotten one is never mistaken for another.
 */
final class ChangeStreamCursors {
    private static final int KEPT = 10_000;

    private record Key(MemberAddress member, long cursorId) {
    }

    private final Map<Key, Boolean> open = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Key, Boolean> eldest) {
            return size() > KEPT;
        }
    };

    /** A change stream's aggregate was answered with this cursor (0: none, it ended in its first batch). */
    synchronized void opened(MemberAddress member, long cursorId) {
        if (cursorId != 0) {
            open.put(new Key(member, cursorId), Boolean.TRUE);
        }
    }

    synchronized boolean isChangeStream(MemberAddress member, long cursorId) {
        return cursorId != 0 && open.containsKey(new Key(member, cursorId));
    }
}
