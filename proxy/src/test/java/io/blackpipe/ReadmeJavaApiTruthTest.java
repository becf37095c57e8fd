package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testcontainers.BlackPipeContainer;
import io.blackpipe.testing.Readme;
import io.blackpipe.testing.Readme.Paragraph;
import io.blackpipe.testing.Readme.Span;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Java API's methods README.md names in prose exist, public, where it says: `BlackPipe.reset()` on
 * BlackPipe, `runBundledScenario(name)` on one of the API's classes, and each name of the sentence
 * "`RemoteBlackPipe` offers `rule`/`fail`/..." on RemoteBlackPipe. (The code examples are compiled
 * and run by ReadmeJavaExamplesTest.)
 */
class ReadmeJavaApiTruthTest {
    private static final String SECTION = "Use it from Java tests";
    private static final Pattern CALL = Pattern.compile("^(?:(\\w+)\\.)?\\.?(\\w+)\\(");
    private static final Map<String, Class<?>> API = Map.of("BlackPipe", BlackPipe.class, "BlackPipeBuilder", BlackPipeBuilder.class,
            "FailRule", FailRule.class, "RemoteBlackPipe", RemoteBlackPipe.class, "ManagedBlackPipe", ManagedBlackPipe.class,
            "BlackPipeContainer", BlackPipeContainer.class, "HistoryEntry", io.blackpipe.observe.HistoryEntry.class);
    private static final String REMOTE_OFFERS = "`RemoteBlackPipe` offers";

    @Test
    void everyMethodTheReadmeNamesExists() {
        List<String> problems = new ArrayList<>();
        for (Paragraph paragraph : Readme.read().paragraphs()) {
            if (paragraph.text().startsWith(REMOTE_OFFERS)) {
                checkRemoteList(paragraph, problems);
            }
            for (Span span : paragraph.spans()) {
                Matcher call = CALL.matcher(span.text());
                if (call.find() && (paragraph.section().equals(SECTION) || call.group(1) != null && API.containsKey(call.group(1)))) {
                    Class<?> owner = call.group(1) == null ? null : API.get(call.group(1));
                    String name = call.group(2);
                    boolean exists = owner != null ? hasPublic(owner, name) : API.values().stream().anyMatch(type -> hasPublic(type, name));
                    if (!exists && (call.group(1) == null || owner != null)) {
                        problems.add("README.md:" + span.line() + ": `" + span.text() + "`: "
                                + (owner != null ? owner.getSimpleName() + " has no" : "none of " + API.keySet() + " has a") + " public method " + name);
                    }
                }
            }
        }
        assertTrue(problems.isEmpty(), "README.md names Java methods the API does not have:\n" + String.join("\n", problems));
    }

    /**
     * The first sentence's names (`rule`/`fail`/`failAll`, `removeRule`, ...) are RemoteBlackPipe's; its
     * parenthesis names the container's `withSimulatedMembers(n)`, and `server()` is BlackPipe's it replaces.
     */
    private static void checkRemoteList(Paragraph paragraph, List<String> problems) {
        String sentence = paragraph.text().substring(REMOTE_OFFERS.length(), paragraph.text().indexOf(". "));
        for (String span : Readme.spans(sentence)) {
            for (String name : span.replaceAll("\\(.*", "").split("/")) {
                if (!hasPublic(RemoteBlackPipe.class, name) && !hasPublic(BlackPipeContainer.class, name) && !name.equals("server")) {
                    problems.add("README.md:" + paragraph.line() + ": " + REMOTE_OFFERS + " `" + span + "`: it has no public method " + name);
                }
            }
        }
    }

    private static boolean hasPublic(Class<?> type, String name) {
        return Arrays.stream(type.getMethods()).filter(m -> Modifier.isPublic(m.getModifiers())).map(Method::getName).anyMatch(name::equals);
    }
}
