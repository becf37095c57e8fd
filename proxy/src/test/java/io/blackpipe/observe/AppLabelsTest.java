package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The app label's cap: the first hundred names are themselves, later ones share "other", and no app is always "". */
class AppLabelsTest {
    @Test
    void theFirstHundredAppsAreLabelledAsThemselvesAndTheRestAsOther() {
        AppLabels labels = new AppLabels();
        for (int i = 0; i < AppLabels.MAX_APPS; i++) {
            assertEquals("app" + i, labels.label("app" + i));
        }
        assertEquals("app7", labels.label("app7"), "asked again, a labelled app keeps its label");
        assertEquals(AppLabels.OTHER, labels.label("app" + AppLabels.MAX_APPS), "the 101st name");
        assertEquals(AppLabels.OTHER, labels.label("late"));
        assertEquals("app0", labels.label("app0"), "the labelled ones still are themselves once the cap is reached");
        assertEquals("app99", labels.label("app99"));
        assertEquals("", labels.label(""), "no appName is never capped");
    }

    @Test
    void noAppNameTakesNoneOfTheHundred() {
        AppLabels labels = new AppLabels();
        assertEquals("", labels.label(""));
        for (int i = 0; i < AppLabels.MAX_APPS; i++) {
            assertEquals("app" + i, labels.label("app" + i), "\"\" took no place among them");
        }
    }
}
