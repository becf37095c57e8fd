package io.blackpipe.pipe;

/**
 * What becomes of a reply that a narrow link carries later ({@link ClientLink#whenCarried}): its last byte goes on its
 * way to the client, or it is lost first (a reset throws away what the link had not carried; the client left).
 */
interface Delivery {
    void carried();

    void lost();
}
