package io.blackpipe.fault;

import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import java.io.StringReader;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.composer.Composer;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.parser.ParserImpl;
import org.yaml.snakeyaml.reader.StreamReader;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * A YAML (or JSON) document as BSON, remembering the line of every field path
 * ("timeline[2].add.data.errorCode") so errors can point into the file.
 *
 * <p>The composed YAML is a graph: an alias (*a) is the anchored node (&a) itself, so a list can
 * contain itself and a few lines can stand for millions of values. Conversion refuses a key given
 * twice in one mapping, a node that contains itself, nesting deeper than {@link #MAX_DEPTH} and
 * more than {@link #MAX_VALUES} values, each as a {@link ScenarioException} at its line.
 */
final class YamlTree {
    /** Lists and mappings inside the file's mapping and one another; a scenario needs about eight. */
    static final int MAX_DEPTH = 32;
    /** Values once aliases are expanded; a long hand-written scenario has a few thousand. */
    static final int MAX_VALUES = 100_000;

    /** A whole number as people write one: no leading zero (YAML 1.1 reads 010 as octal), no 0x, no underscores. */
    private static final Pattern DECIMAL_INTEGER = Pattern.compile("[-+]?(0|[1-9][0-9]*)");
    /** A decimal with a point, as people write one: no exponent, no underscores, no .inf or .nan. */
    private static final Pattern DECIMAL = Pattern.compile("[-+]?([0-9]+\\.[0-9]*|\\.[0-9]+)");
    /**
     * Extended JSON's type wrappers, read as the API's JSON reads them: a scenario can name an ObjectId
     * ({$oid: ...}), a date, an int64 or a decimal (a rule's commandMatches on an _id, a cannedReply's fields).
     */
    private static final Set<String> TYPE_WRAPPERS = Set.of("$oid", "$date", "$numberLong", "$numberInt", "$numberDouble",
            "$numberDecimal", "$binary", "$uuid", "$timestamp", "$regularExpression", "$symbol", "$code", "$minKey", "$maxKey",
            "$undefined", "$dbPointer");

    private final String source;
    private final Map<String, Integer> lines = new HashMap<>();
    /** The lists and mappings being converted, outermost first: meeting one again is a cycle. */
    private final Set<Node> open = Collections.newSetFromMap(new IdentityHashMap<>());
    private int values;

    YamlTree(String source) {
        this.source = source;
    }

    /** What snakeyaml may compose: nesting to {@link #MAX_DEPTH}, so many aliases of lists and mappings, so many characters. */
    static LoaderOptions limits(int maxAliases, int maxCodePoints) {
        LoaderOptions options = new LoaderOptions();
        options.setMaxAliasesForCollections(maxAliases);
        options.setNestingDepthLimit(MAX_DEPTH);
        options.setCodePointLimit(maxCodePoints);
        return options;
    }

    /** The whole text as BSON, a syntax error or a limit passed as a {@link ScenarioException} at its line. */
    BsonValue read(String text, LoaderOptions limits) {
        StreamReader reader = new StreamReader(new StringReader(text));
        try {
            Node node = new Composer(new ParserImpl(reader, limits), new Resolver(), limits).getSingleNode();
            if (node == null) {
                throw new ScenarioException(source, 1, "(file)", "is empty");
            }
            return convert(node, "", 0);
        } catch (MarkedYAMLException e) {
            throw new ScenarioException(source, syntaxLine(e, text), "(syntax)", syntaxMessage(e));
        } catch (YAMLException e) {
            // a limit (aliases, nesting, size) without a mark: where the reader stopped is the line (its look-ahead may
            // be past the last one)
            throw new ScenarioException(source, Math.min(reader.getMark().getLine() + 1, lineCount(text)), "(syntax)", e.getMessage());
        }
    }

    /**
     * The line of a syntax error: the problem's, unless it is the end of the text (a quote or bracket never closed),
     * where the line of what was left open says more: "line 3: found unexpected end of stream" named no line with
     * anything wrong on it.
     */
    private static int syntaxLine(MarkedYAMLException e, String text) {
        Mark problem = e.getProblemMark();
        Mark context = e.getContextMark();
        // snakeyaml's index counts code points: an emoji in the file is one, two chars in a Java string
        if (problem == null || problem.getIndex() >= text.codePointCount(0, text.length()) && context != null) {
            return context == null ? 1 : context.getLine() + 1;
        }
        return Math.min(problem.getLine() + 1, lineCount(text));
    }

    /** The problem with what snakeyaml was reading when it met it ("while scanning a quoted scalar on line 1"). */
    private static String syntaxMessage(MarkedYAMLException e) {
        String context = e.getContext();
        if (context == null) {
            return e.getProblem();
        }
        if (e.getProblem().startsWith("but ")) { // "expected a single document in the stream, but found another document"
            return context + ", " + e.getProblem();
        }
        return e.getProblem() + " (" + context + (e.getContextMark() == null ? "" : " on line " + (e.getContextMark().getLine() + 1)) + ")";
    }

    private static int lineCount(String text) {
        return (int) Math.max(1, text.lines().count());
    }

    private BsonValue convert(Node node, String path, int depth) {
        String field = path.isEmpty() ? "(file)" : path;
        if (open.contains(node)) {
            throw new ScenarioException(source, line(path), field, "an alias that contains itself (a list or mapping inside itself)");
        }
        if (++values > MAX_VALUES) {
            throw tooLarge(path, "the scenario expands to more than " + MAX_VALUES + " values (aliases repeating large blocks?)");
        }
        lines.putIfAbsent(path, node.getStartMark().getLine() + 1);
        if (node instanceof MappingNode || node instanceof SequenceNode) {
            if (depth > MAX_DEPTH) { // as snakeyaml counts: the file's own mapping, and MAX_DEPTH inside it
                throw tooLarge(path, "nested deeper than " + MAX_DEPTH + " lists and mappings (an alias counts as what it names)");
            }
            open.add(node);
            try {
                return node instanceof MappingNode mapping ? mapping(mapping, path, depth) : sequence((SequenceNode) node, path, depth);
            } finally {
                open.remove(node);
            }
        }
        return scalar((ScalarNode) node);
    }

    /**
     * Too much once aliases are expanded (written out, snakeyaml refuses it first), named by the
     * top-level field: deep in an expansion, neither the path nor the anchor's line says much.
     */
    private ScenarioException tooLarge(String path, String message) {
        String top = path.split("[.\\[]", 2)[0];
        return new ScenarioException(source, line(top), top.isEmpty() ? "(file)" : top, message);
    }

    private BsonValue mapping(MappingNode mapping, String path, int depth) {
        BsonDocument document = new BsonDocument();
        for (NodeTuple tuple : mapping.getValue()) {
            int keyLine = tuple.getKeyNode().getStartMark().getLine() + 1;
            if (!(tuple.getKeyNode() instanceof ScalarNode key)) {
                throw new ScenarioException(source, keyLine, path.isEmpty() ? "(file)" : path, "keys must be plain names");
            }
            String childPath = path.isEmpty() ? key.getValue() : path + "." + key.getValue();
            if (key.getValue().equals("<<") && key.getTag().equals(Tag.MERGE)) { // YAML 1.1's, which a strict reader does not take
                throw new ScenarioException(source, keyLine, childPath, "a YAML merge key is not taken: write the fields out, or"
                        + " alias a whole rule (as its own id cannot change, give the others theirs in full)");
            }
            if (document.containsKey(key.getValue())) {
                throw new ScenarioException(source, keyLine, childPath, "given twice (first on line " + line(childPath) + ")");
            }
            // a field is where its key is: a block value ("rules:\n  - ...") starts on a later line
            lines.put(childPath, keyLine);
            document.put(key.getValue(), convert(tuple.getValueNode(), childPath, depth + 1));
        }
        if (!document.isEmpty() && TYPE_WRAPPERS.contains(document.getFirstKey())) {
            return typed(document, path);
        }
        return document;
    }

    private BsonValue typed(BsonDocument wrapper, String path) {
        try {
            return BsonDocument.parse(new BsonDocument("value", wrapper).toJson()).get("value");
        } catch (RuntimeException e) { // JsonParseException, or a value the wrapper's type cannot hold
            throw new ScenarioException(source, line(path), path.isEmpty() ? "(file)" : path, "not a valid Extended JSON "
                    + wrapper.getFirstKey() + " (" + e.getMessage() + ")");
        }
    }

    private BsonArray sequence(SequenceNode sequence, String path, int depth) {
        BsonArray array = new BsonArray();
        int i = 0;
        for (Node item : sequence.getValue()) {
            array.add(convert(item, path + "[" + i++ + "]", depth + 1));
        }
        return array;
    }

    private static BsonValue scalar(ScalarNode node) {
        String text = node.getValue();
        Tag tag = node.getTag();
        // YAML 1.1 also reads 010 (octal 8), 0x10, 1_000 and 1:30 as numbers: they stay text here, which a duration, a
        // rate or a count refuses naming the field, rather than 010 ms being 8 ms
        try {
            if (Tag.INT.equals(tag) && DECIMAL_INTEGER.matcher(text).matches()) {
                long value = Long.parseLong(text);
                return value == (int) value ? new BsonInt32((int) value) : new BsonInt64(value);
            }
            if (Tag.FLOAT.equals(tag) && DECIMAL.matcher(text).matches()) {
                return new BsonDouble(Double.parseDouble(text));
            }
        } catch (NumberFormatException e) { // beyond a long
            return new BsonString(text);
        }
        if (Tag.INT.equals(tag) || Tag.FLOAT.equals(tag)) {
            return new BsonString(text);
        }
        // as YAML 1.2 and JSON, only true and false: YAML 1.1's yes, no, on and off stay text, so that "name: on" is a name
        // and "id: no" an id, not a boolean refused as no string, and "mode: off" gets mode's own answer
        if (Tag.BOOL.equals(tag) && (text.equalsIgnoreCase("true") || text.equalsIgnoreCase("false"))) {
            return BsonBoolean.valueOf(text.equalsIgnoreCase("true"));
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
