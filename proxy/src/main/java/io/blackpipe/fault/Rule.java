package io.blackpipe.fault;

import org.bson.BsonDocument;

/**
 * One fault rule: which commands (matcher), when (mode), what (action). {@code source} is the
 * failCommand-style document it was parsed from, echoed back by listings.
 */
public record Rule(String id, Matcher matcher, Mode mode, FaultAction action, BsonDocument source) {
}
