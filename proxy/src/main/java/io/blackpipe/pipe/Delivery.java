package io.blackpipe.pipe;

/**
 * What becomes of a reply that a slow or narrow link delivers later ({@link ClientLink#whenArrived}): its last byte
 * arrives at the client, or it is lost first (a reset throws away what the link had not carried; the client left).
 */
interface Delivery {
    void arrived();

    void lost();
}
