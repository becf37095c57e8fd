package io.blackpipe.cli;

import picocli.CommandLine.Command;

@Command(name = "blackpipe",
        mixinStandardHelpOptions = true,
        versionProvider = Version.class,
        description = "A MongoDB wire-protocol proxy that breaks the conversation on purpose.",
        subcommands = {ProxyCommand.class, LocalCommand.class, ReportCommand.class, HealthCommand.class,
                FaultCommand.class, ScenarioCommand.class, StatsCommand.class, ExpectCommand.class, HistoryCommand.class, MembersCommand.class,
                ConnectionsCommand.class, ResetCommand.class,
                MemberCommands.Failover.class, MemberCommands.Outage.class, MemberCommands.Blackhole.class,
                MemberCommands.Latency.class, MemberCommands.Bandwidth.class,
                MemberCommands.IdleTimeout.class, MemberCommands.Restart.class, MemberCommands.Restore.class, CompletionCommand.class, picocli.CommandLine.HelpCommand.class})
final class BlackpipeCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "a command is required");
    }
}
