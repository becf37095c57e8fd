package io.blackpipe.fault;

import io.blackpipe.observe.CommandNames;
import io.blackpipe.observe.NameSpelling;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A rule's command name that looks like a misspelt one blackpipe knows ("insret", "Insert"). failCommand takes any
 * name, and so does a rule (the server has commands blackpipe does not know), so such a rule is kept and never fires:
 * the CLI says so in a note rather than refusing it.
 */
public final class CommandSpelling {
    private CommandSpelling() {
    }

    /** A note for each name in the rule's {@code data.failCommands} that looks misspelt; none for a rule without them. */
    public static List<String> notes(BsonDocument rule) {
        List<String> notes = new ArrayList<>();
        BsonValue data = rule.get("data");
        if (data == null || !data.isDocument() || !data.asDocument().isArray("failCommands")) {
            return notes;
        }
        for (BsonValue name : data.asDocument().getArray("failCommands")) {
            if (name.isString()) {
                String likely = likelyMeant(name.asString().getValue());
                if (likely != null) {
                    notes.add("'" + name.asString().getValue() + "' is no command blackpipe knows: did you mean '" + likely
                            + "'? (kept as given, as failCommand keeps any name: the rule faults only a command of that name)");
                }
            }
        }
        return notes;
    }

    /** The command blackpipe knows that {@code name} is likely a misspelling of, or null. */
    static String likelyMeant(String name) {
        return name.isEmpty() || CommandNames.isKnown(name) ? null : NameSpelling.likelyMeant(name, CommandNames.known());
    }
}
