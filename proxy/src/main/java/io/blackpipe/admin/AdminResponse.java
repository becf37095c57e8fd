package io.blackpipe.admin;

import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.LinkedHashMap;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/** What one admin request answers: status, content type, body, and any other headers (Allow on a 405). */
record AdminResponse(HttpResponseStatus status, String contentType, String body, Map<String, String> headers) {
    private static final JsonWriterSettings JSON = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).indent(true).build();

    AdminResponse(HttpResponseStatus status, String contentType, String body) {
        this(status, contentType, body, Map.of());
    }

    AdminResponse withHeader(String name, String value) {
        Map<String, String> more = new LinkedHashMap<>(headers);
        more.put(name, value);
        return new AdminResponse(status, contentType, body, Map.copyOf(more));
    }

    static AdminResponse json(HttpResponseStatus status, BsonDocument body) {
        return new AdminResponse(status, "application/json", body.toJson(JSON) + "\n");
    }

    static AdminResponse ok(BsonDocument body) {
        return json(HttpResponseStatus.OK, body);
    }

    static AdminResponse ok(String key, BsonValue value) {
        return ok(new BsonDocument(key, value));
    }

    static AdminResponse done() {
        return ok(new BsonDocument("ok", new BsonDouble(1)));
    }

    /** An error answer; {@code message} names what was wrong (the field, the resource). */
    static AdminResponse error(HttpResponseStatus status, String message) {
        return json(status, new BsonDocument("ok", new BsonDouble(0)).append("error", new BsonString(message)));
    }

    static AdminResponse text(HttpResponseStatus status, String contentType, String body) {
        return new AdminResponse(status, contentType, body);
    }
}
