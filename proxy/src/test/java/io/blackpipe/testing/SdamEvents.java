package io.blackpipe.testing;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.connection.ServerType;
import com.mongodb.event.ConnectionPoolClearedEvent;
import com.mongodb.event.ConnectionPoolListener;
import com.mongodb.event.ServerDescriptionChangedEvent;
import com.mongodb.event.ServerListener;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** What SDAM did in a driver: each new type its servers' descriptions took, in order, and each pool cleared. */
public final class SdamEvents {
    public final List<ServerType> changes = new CopyOnWriteArrayList<>();
    public final List<ConnectionPoolClearedEvent> cleared = new CopyOnWriteArrayList<>();

    /** Settings for {@code uri} whose client records here. */
    public MongoClientSettings.Builder settings(String uri) {
        return MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri))
                .applyToServerSettings(b -> b.addServerListener(new ServerListener() {
                    @Override
                    public void serverDescriptionChanged(ServerDescriptionChangedEvent event) {
                        changes.add(event.getNewDescription().getType());
                    }
                }))
                .applyToConnectionPoolSettings(b -> b.addConnectionPoolListener(new ConnectionPoolListener() {
                    @Override
                    public void connectionPoolCleared(ConnectionPoolClearedEvent event) {
                        cleared.add(event);
                    }
                }));
    }
}
