package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The fault labels the counters' readers accept are the ones the README lists for blackpipe_faults_injected_total. */
class FaultLabelsTest {

    @Test
    void theReadmeListsEveryLabelAndNoOther() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md")).replaceAll("\\s+", " ");
        int start = readme.indexOf("`fault` what broke the command:");
        String sentence = readme.substring(start, readme.indexOf(". ", start));
        Set<String> listed = new TreeSet<>(Pattern.compile("`(\\w+)`").matcher(sentence).results().map(m -> m.group(1)).toList());
        listed.remove("fault");
        assertEquals(new TreeSet<>(FaultLabels.ALL), listed, "README's fault labels: " + sentence);
    }

    @Test
    void aLabelNoCounterCarriesIsRefusedNamingThemAll() {
        assertEquals("dropReply", FaultLabels.check("dropReply"));
        IllegalArgumentException typo = assertThrows(IllegalArgumentException.class,
                () -> FaultLabels.check("dropreply"));
        assertEquals("fault: 'dropreply' is none of " + FaultLabels.ALL + ": did you mean 'dropReply'?", typo.getMessage());
        IllegalArgumentException unlike = assertThrows(IllegalArgumentException.class, () -> FaultLabels.check("latency"));
        assertEquals("fault: 'latency' is none of " + FaultLabels.ALL, unlike.getMessage(), "no guess for a name like none of them");
    }
}
