package io.blackpipe.fault;

import java.util.HashMap;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * A YAML (or JSON) document as BSON, remembering the line of every field path
 * ("timeline[2].add.data.errorCode") so errors can point into the file.
 */
final class YamlTree {
    private final Map<String, Integer> lines = new HashMap<>();

    BsonValue convert(Node node, String path) {
        lines.put(path, node.getStartMark().getLine() + 1);
        if (node instanceof MappingNode mapping) {
            BsonDocument document = new BsonDocument();
            for (NodeTuple tuple : mapping.getValue()) {
                if (!(tuple.getKeyNode() instanceof ScalarNode key)) {
                    throw new IllegalArgumentException("line " + (tuple.getKeyNode().getStartMark().getLine() + 1) + ": keys must be plain names");
                }
                String childPath = path.isEmpty() ? key.getValue() : path + "." + key.getValue();
                document.put(key.getValue(), convert(tuple.getValueNode(), childPath));
                // a field is where its key is: a block value ("rules:\n  - ...") starts on a later line
                lines.put(childPath, key.getStartMark().getLine() + 1);
            }
            return document;
        }
        if (node instanceof SequenceNode sequence) {
            BsonArray array = new BsonArray();
            int i = 0;
            for (Node item : sequence.getValue()) {
                array.add(convert(item, path + "[" + i++ + "]"));
            }
            return array;
        }
        return scalar((ScalarNode) node);
    }

    private static BsonValue scalar(ScalarNode node) {
        String text = node.getValue();
        Tag tag = node.getTag();
        try {
            if (Tag.INT.equals(tag)) {
                long value = Long.decode(text.replace("_", ""));
                return value == (int) value ? new BsonInt32((int) value) : new BsonInt64(value);
            }
            if (Tag.FLOAT.equals(tag)) {
                return new BsonDouble(Double.parseDouble(text.replace("_", "")));
            }
        } catch (NumberFormatException e) {
            return new BsonString(text);
        }
        if (Tag.BOOL.equals(tag)) {
            return BsonBoolean.valueOf(text.equalsIgnoreCase("true") || text.equalsIgnoreCase("yes") || text.equalsIgnoreCase("on"));
        }
        if (Tag.NULL.equals(tag)) {
            return BsonNull.VALUE;
        }
        return new BsonString(text);
    }

    /** The line of {@code path}, or of its nearest parent that has one. */
    int line(String path) {
        String p = path;
        while (true) {
            Integer line = lines.get(p);
            if (line != null) {
                return line;
            }
            int cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
            if (cut <= 0) {
                return lines.getOrDefault("", 1);
            }
            p = p.substring(0, cut);
        }
    }
}
