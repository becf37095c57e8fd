package io.blackpipe.pipe;

import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** What the driver itself reports through command monitoring: the ground truth tests compare with. */
final class CommandLog implements CommandListener {
    final List<CommandStartedEvent> started = new CopyOnWriteArrayList<>();
    final List<CommandSucceededEvent> succeeded = new CopyOnWriteArrayList<>();
    final List<CommandFailedEvent> failed = new CopyOnWriteArrayList<>();

    @Override
    public void commandStarted(CommandStartedEvent event) {
        started.add(event);
    }

    @Override
    public void commandSucceeded(CommandSucceededEvent event) {
        succeeded.add(event);
    }

    @Override
    public void commandFailed(CommandFailedEvent event) {
        failed.add(event);
    }

    long startedCount(String commandName) {
        return started.stream().filter(e -> e.getCommandName().equals(commandName)).count();
    }

    void clear() {
        started.clear();
        succeeded.clear();
        failed.clear();
    }
}
