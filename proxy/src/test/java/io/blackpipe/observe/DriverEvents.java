package io.blackpipe.observe;

import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What the driver itself reports through command monitoring: the ground truth the proxy's counters
 * must equal. A started event counts as a driver retry when an earlier one of the same operation
 * and command name failed, or carried the same lsid and txnNumber (a retryable write whose first
 * attempt "succeeded" with a writeConcernError).
 */
final class DriverEvents implements CommandListener {
    /** A started event, its command copied while the listener runs (the driver may reuse the buffer after). */
    record Started(String name, long operationId, int requestId, BsonDocument command) {
    }

    private final List<Started> started = new CopyOnWriteArrayList<>();
    private final Set<Integer> failed = ConcurrentHashMap.newKeySet();
    private final Set<Integer> succeeded = ConcurrentHashMap.newKeySet();

    @Override
    public void commandStarted(CommandStartedEvent event) {
        started.add(new Started(event.getCommandName(), event.getOperationId(), event.getRequestId(),
                event.getCommand().clone()));
    }

    @Override
    public void commandSucceeded(CommandSucceededEvent event) {
        succeeded.add(event.getRequestId());
    }

    @Override
    public void commandFailed(CommandFailedEvent event) {
        failed.add(event.getRequestId());
    }

    /** Whether the driver reported this attempt as failed (an error reply, a network error, a timeout). */
    boolean failed(Started event) {
        return failed.contains(event.requestId());
    }

    /** One line per started event: name, operation id, and how the driver says it ended. */
    String describe() {
        StringBuilder out = new StringBuilder();
        for (Started e : started) {
            out.append("\n  ").append(e.name()).append(" op=").append(e.operationId()).append(" req=").append(e.requestId())
                    .append(failed.contains(e.requestId()) ? " FAILED" : succeeded.contains(e.requestId()) ? " succeeded" : " (no end)")
                    .append(' ').append(e.command().toJson());
        }
        return out.toString();
    }

    List<Started> started() {
        return new ArrayList<>(started);
    }

    long started(String command) {
        return started.stream().filter(e -> e.name().equals(command)).count();
    }

    Set<String> commandNames() {
        Set<String> names = new TreeSet<>();
        started.forEach(e -> names.add(e.name()));
        return names;
    }

    /** The started events of {@code command} that re-send an earlier attempt of the same operation. */
    long retries(String command) {
        List<Started> events = started();
        long retries = 0;
        for (int i = 0; i < events.size(); i++) {
            Started e = events.get(i);
            if (!e.name().equals(command)) {
                continue;
            }
            for (int j = 0; j < i; j++) {
                Started earlier = events.get(j);
                if (earlier.operationId() == e.operationId() && earlier.name().equals(command)
                        && (failed.contains(earlier.requestId()) || sameTransactionNumber(earlier, e))) {
                    retries++;
                    break;
                }
            }
        }
        return retries;
    }

    private static boolean sameTransactionNumber(Started a, Started b) {
        BsonValue txnA = a.command().get("txnNumber");
        BsonValue lsidA = a.command().get("lsid");
        return txnA != null && lsidA != null && txnA.equals(b.command().get("txnNumber"))
                && lsidA.equals(b.command().get("lsid"));
    }
}
