package io.blackpipe.fault;

import org.bson.BsonDocument;
import org.bson.BsonValue;

/** A rule's fields of one type each, read or refused naming the field: what RuleParser and RuleActions share. */
final class RuleFields {
    private RuleFields() {
    }

    static boolean flag(BsonDocument data, String key) {
        BsonValue value = data.get(key);
        if (value == null) {
            return false;
        }
        if (!value.isBoolean()) {
            throw new RuleException("data." + key, "must be true or false");
        }
        return value.asBoolean().getValue();
    }

    static String string(BsonDocument data, String key) {
        BsonValue value = data.get(key);
        if (value == null) {
            return null;
        }
        if (!value.isString()) {
            throw new RuleException("data." + key, "must be a string");
        }
        return value.asString().getValue();
    }

    static long atLeastOne(BsonDocument data, String key) {
        return wholeNumber(data, key, "data." + key, 1);
    }

    static long nonNegative(BsonDocument document, String key, String field) {
        return wholeNumber(document, key, field, 0);
    }

    static long wholeNumber(BsonDocument document, String key, String field, long min) {
        BsonValue value = document.get(key);
        if (value == null || !value.isNumber() || !(value.asNumber().doubleValue() >= min)
                || value.asNumber().doubleValue() != value.asNumber().longValue()) {
            throw new RuleException(field, (min == 0 ? "must be a non-negative integer" : "must be a whole number of at least " + min)
                    + got(value));
        }
        return value.asNumber().longValue();
    }

    /** ", got \"x\"" (the value as JSON, cut at 60 characters), so that an error says what was given; "" for none. */
    static String got(BsonValue value) {
        if (value == null) {
            return "";
        }
        String shown = FieldCondition.shown(value);
        return ", got " + (shown.length() > 60 ? shown.substring(0, 60) + "…" : shown);
    }
}
