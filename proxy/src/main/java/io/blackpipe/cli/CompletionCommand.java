package io.blackpipe.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@Command(name = "completion", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = {"Print a bash (and zsh) completion script for every blackpipe command and option.",
                "  source <(java -jar blackpipe.jar completion)",
                "or save it to /etc/bash_completion.d/blackpipe."})
final class CompletionCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        out.print(AutoComplete.bash(spec.root().name(), spec.root().commandLine()));
        out.flush();
        return 0;
    }
}
