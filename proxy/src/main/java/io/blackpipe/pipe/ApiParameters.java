package io.blackpipe.pipe;

import io.blackpipe.fault.ErrorReplies;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The Stable API fields (apiVersion, apiStrict, apiDeprecationErrors) of a command the proxy answers itself, checked
 * as mongod checks them on every command before running it (its validate_api_parameters.cpp), in its order. Commands
 * the member runs are checked by the member.
 */
final class ApiParameters {
    private static final int TYPE_MISMATCH = 14;
    private static final int API_VERSION_ERROR = 322;
    private static final int API_STRICT_ERROR = 323;
    /** mongod's code for apiStrict or apiDeprecationErrors sent without apiVersion. */
    private static final int WITHOUT_API_VERSION = 4886600;

    private ApiParameters() {
    }

    /**
     * mongod's refusal of {@code command}'s API parameters, or null when it would run it. {@code commandName} is in
     * no API version (true of the failpoint commands, the only ones the proxy answers), so apiStrict:true refuses it.
     */
    static BsonDocument refusal(BsonDocument command, String commandName) {
        BsonDocument wrongType = wrongType(command, "apiVersion", "string");
        wrongType = wrongType != null ? wrongType : wrongType(command, "apiStrict", "bool");
        wrongType = wrongType != null ? wrongType : wrongType(command, "apiDeprecationErrors", "bool");
        if (wrongType != null) {
            return wrongType;
        }
        boolean hasVersion = command.containsKey("apiVersion");
        if (!hasVersion && (command.containsKey("apiStrict") || command.containsKey("apiDeprecationErrors"))) {
            // presence, not value, on mongod too: apiStrict:false without a version is refused as well
            return ErrorReplies.commandError(WITHOUT_API_VERSION,
                    "Provided apiStrict and/or apiDeprecationErrors without passing apiVersion");
        }
        if (hasVersion && !"1".equals(command.getString("apiVersion").getValue())) {
            return ErrorReplies.commandError(API_VERSION_ERROR, "API version must be \"1\"");
        }
        if (command.containsKey("apiStrict") && command.getBoolean("apiStrict").getValue()) {
            return ErrorReplies.commandError(API_STRICT_ERROR, "Provided apiStrict:true, but the command " + commandName
                    + " is not in API Version 1");
        }
        return null;
    }

    private static BsonDocument wrongType(BsonDocument command, String field, String expected) {
        BsonValue value = command.get(field);
        if (value == null || ServerNumbers.typeName(value).equals(expected)) {
            return null;
        }
        return ErrorReplies.commandError(TYPE_MISMATCH, "BSON field 'APIParametersFromClient." + field + "' is the wrong type '"
                + ServerNumbers.typeName(value) + "', expected type '" + expected + "'");
    }
}
