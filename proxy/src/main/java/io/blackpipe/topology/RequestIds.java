package io.blackpipe.topology;

import java.util.Arrays;

/** A few request ids (hellos in flight on one connection are one or two), kept without boxing. */
final class RequestIds {
    private int[] ids = new int[2];
    private int count;

    void add(int id) {
        if (count == ids.length) {
            ids = Arrays.copyOf(ids, ids.length * 2);
        }
        ids[count++] = id;
    }

    /** Removes the id; false when it was not there. */
    boolean remove(int id) {
        for (int i = 0; i < count; i++) {
            if (ids[i] == id) {
                ids[i] = ids[--count];
                return true;
            }
        }
        return false;
    }

    boolean isEmpty() {
        return count == 0;
    }
}
