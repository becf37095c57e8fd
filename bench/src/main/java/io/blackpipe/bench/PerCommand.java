package io.blackpipe.bench;

import io.blackpipe.fault.RuleSet;
import io.blackpipe.observe.Attempt;
import io.blackpipe.observe.CommandObserver;
import io.blackpipe.observe.ConnectionObserver;
import io.blackpipe.observe.History;
import io.blackpipe.observe.Outcome;
import io.blackpipe.observe.RetryTracker;
import io.blackpipe.topology.MemberState;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.CommandScanner;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.ReplyFacts;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What blackpipe does per command besides moving bytes, without sockets (`bench/per-command`):
 * read a request's facts (and a read's fingerprint), count the attempt, ask the rules, read the
 * reply, complete the attempt with its meters and history line. The end-to-end harness cannot
 * tell 0.1 us per command apart on a shared machine; this loop can. {@link #frames} is the floor:
 * only the OP_MSG structure checks of the request and the reply.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 200, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 20, time = 200, timeUnit = TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled"})
public class PerCommand {
    private static final int VARIANTS = 32; // sessions and filters vary, as from a pool of clients

    private final ByteBuf[] finds = new ByteBuf[VARIANTS];
    private final ByteBuf[] inserts = new ByteBuf[VARIANTS];
    private final CommandFacts[] findFacts = new CommandFacts[VARIANTS];
    private ByteBuf findReply;
    private ByteBuf insertReply;
    private final CommandScanner scanner = new CommandScanner(); // one connection's
    private final RuleSet rules = new RuleSet();
    private final Supplier<MemberState> memberState = () -> MemberState.UNKNOWN; // read only when a rule names the command
    /** The request's document, as Exchange hands it over: read only when a rule names the command and looks into it. */
    private final Supplier<BsonDocument> commandDocument = () -> null;
    private ConnectionObserver connection;
    private int next;

    @Setup(Level.Trial)
    public void setUp() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        CommandObserver observer = new CommandObserver(registry,
                new RetryTracker(100_000, TimeUnit.MINUTES.toNanos(30)), History.inMemory(10_000));
        connection = observer.forConnection("127.0.0.1:27017");
        for (int i = 0; i < VARIANTS; i++) {
            BsonDocument session = new BsonDocument("id", new BsonBinary(UUID.randomUUID()));
            // as the Java driver sends them: a find in an implicit session, a retryable insert
            BsonDocument find = new BsonDocument("find", new BsonString("items"))
                    .append("filter", new BsonDocument("_id", new BsonInt32(i)))
                    .append("limit", new BsonInt32(1)).append("singleBatch", BsonBoolean.TRUE)
                    .append("$db", new BsonString("blackpipe_bench")).append("lsid", session)
                    .append("$clusterTime", clusterTime());
            finds[i] = Messages.opMsg(PooledByteBufAllocator.DEFAULT, i, 0, 0, find);
            findFacts[i] = CommandFacts.ofOpMsg(finds[i], OpMsg.parse(finds[i]));
            BsonDocument insert = new BsonDocument("insert", new BsonString("items"))
                    .append("ordered", BsonBoolean.TRUE).append("txnNumber", new BsonInt64(i + 1))
                    .append("$db", new BsonString("blackpipe_bench")).append("lsid", session)
                    .append("$clusterTime", clusterTime());
            inserts[i] = withDocuments(i, insert, new BsonDocument("_id", new BsonInt32(1_000 + i))
                    .append("v", new BsonString("x".repeat(40))));
        }
        BsonDocument found = new BsonDocument("_id", new BsonInt32(5)).append("v", new BsonString("x".repeat(40)));
        findReply = Messages.opMsg(PooledByteBufAllocator.DEFAULT, 1, 0, 0, new BsonDocument("cursor",
                new BsonDocument("firstBatch", new BsonArray(List.of(found))).append("id", new BsonInt64(0))
                        .append("ns", new BsonString("blackpipe_bench.items")))
                .append("ok", new BsonDouble(1)).append("$clusterTime", clusterTime())
                .append("operationTime", new BsonTimestamp(1, 1)));
        insertReply = Messages.opMsg(PooledByteBufAllocator.DEFAULT, 2, 0, 0, new BsonDocument("n", new BsonInt32(1))
                .append("ok", new BsonDouble(1)).append("$clusterTime", clusterTime())
                .append("operationTime", new BsonTimestamp(1, 1)));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        for (int i = 0; i < VARIANTS; i++) {
            finds[i].release();
            inserts[i].release();
        }
        findReply.release();
        insertReply.release();
    }

    /** The floor: the structure checks of the request and the reply. */
    @Benchmark
    public int frames() {
        ByteBuf request = finds[next++ & (VARIANTS - 1)];
        return OpMsg.parse(request).bodyOffset() + OpMsg.parse(findReply).bodyOffset();
    }

    /** Reading a find: its facts and fingerprint, then its reply's facts. */
    @Benchmark
    public ReplyFacts readFind() {
        ByteBuf request = finds[next++ & (VARIANTS - 1)];
        CommandFacts facts = scanner.ofOpMsg(request, OpMsg.parse(request));
        return facts.fingerprint() == 0 ? null : ReplyFacts.of(findReply);
    }

    /** Counting a find already read: its attempt, the rules (none loaded), its completion. */
    @Benchmark
    public RuleSet.Decision countFind() {
        CommandFacts facts = findFacts[next++ & (VARIANTS - 1)];
        return count(facts, ReplyFacts.of(findReply), false);
    }

    @Benchmark
    public RuleSet.Decision find() {
        return command(finds[next++ & (VARIANTS - 1)], findReply);
    }

    @Benchmark
    public RuleSet.Decision insert() {
        return command(inserts[next++ & (VARIANTS - 1)], insertReply);
    }

    /** A find and an insert in turn on one connection, as the end-to-end mix workload's threads send them. */
    @Benchmark
    public RuleSet.Decision mix() {
        int i = next++;
        int variant = (i >> 1) & (VARIANTS - 1);
        return (i & 1) == 0 ? command(finds[variant], findReply) : command(inserts[variant], insertReply);
    }

    private RuleSet.Decision command(ByteBuf request, ByteBuf reply) {
        CommandFacts facts = scanner.ofOpMsg(request, OpMsg.parse(request));
        return count(facts, ReplyFacts.of(reply), true);
    }

    private RuleSet.Decision count(CommandFacts facts, ReplyFacts reply, boolean forwarded) {
        Attempt attempt = connection.begin(facts, facts.fingerprint());
        RuleSet.Decision decision = rules.decide(attempt, memberState, "127.0.0.1:27017", commandDocument);
        connection.complete(attempt, facts.fingerprint(), reply.isError() ? Outcome.ERROR : Outcome.OK, null, reply.code(),
                reply.writeConcernError(), forwarded);
        return decision;
    }

    private static BsonDocument clusterTime() {
        return new BsonDocument("clusterTime", new BsonTimestamp(1, 1)).append("signature",
                new BsonDocument("hash", new BsonBinary(new byte[20])).append("keyId", new BsonInt64(0)));
    }

    /** An OP_MSG whose body is followed by a "documents" sequence (kind 1), as the driver sends writes. */
    private static ByteBuf withDocuments(int requestId, BsonDocument body, BsonDocument document) {
        ByteBuffer bodyBytes = bytes(body);
        ByteBuffer documentBytes = bytes(document);
        byte[] identifier = "documents\0".getBytes(StandardCharsets.US_ASCII);
        int sequenceSize = 4 + identifier.length + documentBytes.remaining();
        int length = 16 + 4 + 1 + bodyBytes.remaining() + 1 + sequenceSize;
        ByteBuf frame = PooledByteBufAllocator.DEFAULT.directBuffer(length);
        frame.writeIntLE(length).writeIntLE(requestId).writeIntLE(0).writeIntLE(2013).writeIntLE(0);
        frame.writeByte(0).writeBytes(bodyBytes);
        frame.writeByte(1).writeIntLE(sequenceSize).writeBytes(identifier).writeBytes(documentBytes);
        return frame;
    }

    private static ByteBuffer bytes(BsonDocument document) {
        return new RawBsonDocument(document, new BsonDocumentCodec()).getByteBuffer().asNIO();
    }
}
