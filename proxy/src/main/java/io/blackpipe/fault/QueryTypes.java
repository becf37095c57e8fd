package io.blackpipe.fault;

import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.bson.BsonType;
import org.bson.BsonValue;

/** The BSON types a query's {@code $type} names, by alias ("int", "number") or by number (16, -1 for minKey), as the server reads them. */
final class QueryTypes {
    private static final Map<String, Set<BsonType>> BY_ALIAS = new LinkedHashMap<>();

    static {
        alias("double", BsonType.DOUBLE);
        alias("string", BsonType.STRING);
        alias("object", BsonType.DOCUMENT);
        alias("array", BsonType.ARRAY);
        alias("binData", BsonType.BINARY);
        alias("undefined", BsonType.UNDEFINED);
        alias("objectId", BsonType.OBJECT_ID);
        alias("bool", BsonType.BOOLEAN);
        alias("date", BsonType.DATE_TIME);
        alias("null", BsonType.NULL);
        alias("regex", BsonType.REGULAR_EXPRESSION);
        alias("dbPointer", BsonType.DB_POINTER);
        alias("javascript", BsonType.JAVASCRIPT);
        alias("symbol", BsonType.SYMBOL);
        alias("javascriptWithScope", BsonType.JAVASCRIPT_WITH_SCOPE);
        alias("int", BsonType.INT32);
        alias("timestamp", BsonType.TIMESTAMP);
        alias("long", BsonType.INT64);
        alias("decimal", BsonType.DECIMAL128);
        alias("minKey", BsonType.MIN_KEY);
        alias("maxKey", BsonType.MAX_KEY);
        BY_ALIAS.put("number", EnumSet.of(BsonType.DOUBLE, BsonType.INT32, BsonType.INT64, BsonType.DECIMAL128));
    }

    private QueryTypes() {
    }

    private static void alias(String name, BsonType type) {
        BY_ALIAS.put(name, EnumSet.of(type));
    }

    /** The types {@code operand} names (one alias or number, or an array of them). @throws RuleException naming {@code at} */
    static Set<BsonType> named(String at, BsonValue operand) {
        Set<BsonType> types = EnumSet.noneOf(BsonType.class);
        if (operand.isArray()) {
            if (operand.asArray().isEmpty()) {
                throw new RuleException(at, "must name at least one type");
            }
            operand.asArray().forEach(each -> types.addAll(one(at, each)));
        } else {
            types.addAll(one(at, operand));
        }
        return types;
    }

    private static Set<BsonType> one(String at, BsonValue name) {
        if (name.isString()) {
            Set<BsonType> types = BY_ALIAS.get(name.asString().getValue());
            if (types == null) {
                throw new RuleException(at, "'" + name.asString().getValue() + "' is not a BSON type (the server's aliases: "
                        + String.join(", ", BY_ALIAS.keySet()) + ")");
            }
            return types;
        }
        if (name.isNumber() && name.asNumber().doubleValue() % 1 == 0) {
            int code = name.asNumber().intValue();
            for (Set<BsonType> types : BY_ALIAS.values()) {
                BsonType type = types.iterator().next();
                if (types.size() == 1 && code(type) == code) {
                    return types;
                }
            }
        }
        throw new RuleException(at, FieldCondition.shown(name) + " is not a BSON type: give an alias such as \"int\" or its number (16)");
    }

    /** The number a query gives the type: BSON's type byte, minKey -1. */
    private static int code(BsonType type) {
        return type == BsonType.MIN_KEY ? -1 : type.getValue();
    }

    static boolean isOneOf(BsonValue value, Set<BsonType> types) {
        return types.contains(value.getBsonType());
    }
}
