package io.blackpipe.bench;

import io.netty.buffer.ByteBuf;

/** The fields of a request the wire responder looks at, read in one pass over its body. */
final class ResponderRequest implements Bson.Visitor {
    private final ByteBuf in;
    String name = "";
    String db = "";
    String collection = "";
    long cursorId;
    int batchSize = -1;
    boolean singleBatch;
    boolean hasFilterId;
    long filterId;
    int documents;
    long[] killCursors = new long[0];
    boolean hasTopologyVersion;
    long maxAwaitTimeMs = -1;
    boolean helloOk;

    ResponderRequest(ByteBuf in, int body) {
        this.in = in;
        Bson.forEach(in, body, this);
    }

    @Override
    public void element(byte type, String key, int at) {
        if (name.isEmpty()) {
            name = key;
            if (type == Bson.STRING) {
                collection = Bson.string(in, at);
            } else if (Bson.isNumber(type)) {
                cursorId = Bson.number(in, type, at);
            }
            return;
        }
        switch (key) {
            case "$db" -> db = Bson.string(in, at);
            case "collection" -> collection = Bson.string(in, at);
            case "batchSize" -> batchSize = (int) Bson.number(in, type, at);
            case "singleBatch" -> singleBatch = in.getByte(at) != 0;
            case "documents" -> documents += type == Bson.ARRAY ? Bson.count(in, at) : 0;
            case "topologyVersion" -> hasTopologyVersion = true;
            case "maxAwaitTimeMS" -> maxAwaitTimeMs = Bson.number(in, type, at);
            case "helloOk" -> helloOk = type == Bson.BOOLEAN && in.getByte(at) != 0;
            case "filter" -> {
                if (type == Bson.DOCUMENT) {
                    Bson.forEach(in, at, (t, k, v) -> {
                        if (k.equals("_id") && Bson.isNumber(t)) {
                            hasFilterId = true;
                            filterId = Bson.number(in, t, v);
                        }
                    });
                }
            }
            case "cursors" -> {
                if (type == Bson.ARRAY) {
                    long[] ids = new long[Bson.count(in, at)];
                    int[] i = {0};
                    Bson.forEach(in, at, (t, k, v) -> ids[i[0]++] = Bson.isNumber(t) ? Bson.number(in, t, v) : 0);
                    killCursors = ids;
                }
            }
            default -> {
            }
        }
    }
}
