package io.blackpipe.testing;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** What the driver itself reports through command monitoring: the ground truth tests compare with. */
public final class CommandLog implements CommandListener {
    public final List<CommandStartedEvent> started = new CopyOnWriteArrayList<>();
    public final List<CommandSucceededEvent> succeeded = new CopyOnWriteArrayList<>();
    public final List<CommandFailedEvent> failed = new CopyOnWriteArrayList<>();

    /** {@code uri} with {@code options} (name=value&...) appended after '?' or '&' as it needs. */
    public static String withOptions(String uri, String options) {
        return options.isEmpty() ? uri : uri + (uri.contains("?") ? "&" : "?") + options;
    }

    /** Settings of a driver on {@code uri} that gives up selecting a server after 10 s and reports its commands here. */
    public MongoClientSettings.Builder driverOn(String uri) {
        return MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
                .addCommandListener(this);
    }

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

    public long startedCount(String commandName) {
        return started.stream().filter(e -> e.getCommandName().equals(commandName)).count();
    }

    public void clear() {
        started.clear();
        succeeded.clear();
        failed.clear();
    }
}
