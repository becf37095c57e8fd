package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.testing.LogCapture;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The app label's cap: the first hundred names are themselves, later ones share "other", and no app is always "". */
class CappedLabelsTest {
    @Test
    void theFirstHundredAppsAreLabelledAsThemselvesAndTheRestAsOther() {
        CappedLabels labels = CappedLabels.apps();
        for (int i = 0; i < CappedLabels.MAX_APPS; i++) {
            assertEquals("app" + i, labels.label("app" + i));
        }
        assertEquals("app7", labels.label("app7"), "asked again, a labelled app keeps its label");
        assertEquals(CappedLabels.OTHER, labels.label("app" + CappedLabels.MAX_APPS), "the 101st name");
        assertEquals(CappedLabels.OTHER, labels.label("late"));
        assertEquals("app0", labels.label("app0"), "the labelled ones still are themselves once the cap is reached");
        assertEquals("app99", labels.label("app99"));
        assertEquals("", labels.label(""), "no appName is never capped");
    }

    @Test
    void reachingTheCapIsSaidOnce() {
        CappedLabels labels = CappedLabels.apps();
        try (LogCapture log = LogCapture.start()) {
            for (int i = 0; i < CappedLabels.MAX_APPS; i++) {
                labels.label("app" + i);
            }
            assertEquals(List.of(), capNotes(log), "no note while there is room");
            labels.label("late1");
            labels.label("late2");
            labels.label("late1");
            assertEquals(List.of(CappedLabels.MAX_APPS + " distinct apps (appName) have their own metrics label: the commands of"
                    + " further apps are counted as app=\"other\" (the history keeps their names)"), capNotes(log));
        }
    }

    private static List<String> capNotes(LogCapture log) {
        return log.messages().stream().filter(m -> m.contains("distinct apps (appName)")).toList();
    }

    @Test
    void aLabelIsTheFirst128CharsOfTheName() {
        CappedLabels labels = CappedLabels.apps();
        String name = "a".repeat(127) + "\uD83D\uDE00" + "b".repeat(200_000); // a surrogate pair across the 128th char
        assertEquals("a".repeat(127), labels.label(name), "never half of a pair");
        assertEquals("c".repeat(128), labels.label("c".repeat(129)));
        assertEquals("d".repeat(128), labels.label("d".repeat(128)));
    }

    @Test
    void noAppNameTakesNoneOfTheHundred() {
        CappedLabels labels = CappedLabels.apps();
        assertEquals("", labels.label(""));
        for (int i = 0; i < CappedLabels.MAX_APPS; i++) {
            assertEquals("app" + i, labels.label("app" + i), "\"\" took no place among them");
        }
    }
}
