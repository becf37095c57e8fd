package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.Bandwidth;
import io.blackpipe.fault.Direction;
import io.blackpipe.fault.IdleTimeout;
import io.blackpipe.fault.Latency;
import io.blackpipe.topology.MemberAddress;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultChannelId;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The slow link on its own, on an embedded channel: what waits, in what order, and what becomes of it. Time only
 * runs forward here: a message is checked not out before its delay could have passed, and out after a sleep
 * longer than it.
 */
class ClientLinkTest {
    private final MemberListener member = new MemberListener(new MemberAddress("db1", 27017), null, "127.0.0.1", new ProxyLog(), null, 42);
    private final EmbeddedChannel channel = new EmbeddedChannel(new ClientLink(member));
    private final List<ByteBuf> sent = new ArrayList<>();

    @AfterEach
    void releaseWhatWasLeft() {
        member.close(); // so that the channel's own close does not wait for a latency
        channel.finishAndReleaseAll();
        for (ByteBuf buf : sent) {
            assertEquals(0, buf.refCnt(), "every message sent or dropped is released");
        }
    }

    private ByteBuf message(int n) {
        ByteBuf buf = Unpooled.buffer(4).writeInt(n);
        sent.add(buf);
        return buf;
    }

    /** The numbers the client has received so far, each message released once read. */
    private List<Integer> received() {
        channel.runPendingTasks();
        channel.runScheduledPendingTasks();
        List<Integer> numbers = new ArrayList<>();
        for (ByteBuf buf = channel.readOutbound(); buf != null; buf = channel.readOutbound()) {
            if (buf.isReadable()) { // (an empty one is a close's marker: Channels.closeOnFlush)
                numbers.add(buf.readInt());
            }
            buf.release();
        }
        return numbers;
    }

    @Test
    void withoutALatencyEverythingPassesAtOnce() {
        channel.writeAndFlush(message(1));
        assertEquals(List.of(1), received());
        channel.writeInbound(message(2));
        ByteBuf in = channel.readInbound();
        assertEquals(2, in.readInt());
        in.release();
        channel.close();
        assertFalse(channel.isOpen());
    }

    @Test
    void aMessageArrivesAfterItsDelayAndTheOnesAfterItInOrder() throws Exception {
        member.latency(new Latency(100, 0), 0);
        channel.writeAndFlush(message(1));
        channel.writeAndFlush(message(2));
        assertEquals(List.of(), received(), "nothing before its delay");
        Thread.sleep(150);
        assertEquals(List.of(1, 2), received());
    }

    @Test
    void aJitterDelaysEachMessageDifferentlyButReordersNothing() throws Exception {
        member.latency(new Latency(30, 30), 0); // each 0 to 60 ms
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            channel.writeAndFlush(message(i));
            expected.add(i);
        }
        Thread.sleep(120);
        assertEquals(expected, received());
    }

    @Test
    void theCloseComesAfterTheMessagesSentBeforeItAndWhatTheClientSendsMeanwhileIsDropped() throws Exception {
        member.latency(new Latency(100, 0), 0);
        channel.writeAndFlush(message(1));
        // through the pipeline, as the proxy closes: EmbeddedChannel's own close() cancels every scheduled task
        ChannelFuture closed = channel.pipeline().close();
        channel.writeAndFlush(message(2)); // after the close: it never goes
        assertTrue(channel.isOpen(), "the client has not seen the end yet");
        assertTrue(channel.pipeline().get(ClientLink.class).closedAtTheMembersEnd(), "the proxy's side has ended");
        ByteBuf late = message(3);
        channel.writeInbound(late);
        assertNull(channel.readInbound(), "sent into a member's end that closed: it runs nowhere");
        assertEquals(0, late.refCnt());
        Thread.sleep(150);
        assertEquals(List.of(1), received(), "the reply sent before the close arrives, then the end");
        assertFalse(channel.isOpen());
        assertTrue(closed.isSuccess());
    }

    @Test
    void forTheProxyAWriteIsDoneAndACloseHasEndedTheConnectionAtOnceAndTheClientSeesThemOneDelayLater() throws Exception {
        List<String> upTheMembersEnd = new ArrayList<>();
        channel.pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                upTheMembersEnd.add("inactive");
            }
        });
        member.latency(new Latency(100, 0), 0);
        ChannelFuture written = channel.writeAndFlush(message(1));
        assertTrue(written.isSuccess(), "on its way: done, as a socket's write is once the kernel has it");
        // Channels.closeOnFlush, through the pipeline (EmbeddedChannel's own close() cancels every scheduled task):
        // an empty write, then a close once it is done, a FIN behind the last reply
        channel.pipeline().writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(f -> channel.pipeline().close());
        assertEquals(List.of(), upTheMembersEnd, "told after the close returned, as Netty tells of a socket's close");
        channel.runPendingTasks();
        assertEquals(List.of("inactive"), upTheMembersEnd, "the proxy's side has ended, a delay before the client's");
        ClientLink link = channel.pipeline().get(ClientLink.class);
        assertTrue(link.closedAtTheMembersEnd());
        assertTrue(channel.isOpen(), "the client has not seen the end yet");
        Thread.sleep(150); // one delay and some: the close went behind the write, not a delay after it
        assertEquals(List.of(1), received());
        assertFalse(channel.isOpen());
        assertEquals(List.of("inactive"), upTheMembersEnd, "the real end is not told twice");
    }

    @Test
    void aLatencyThatEndsLetsWhatWaitsGoFirstAndTheNextMessagesBehindIt() throws Exception {
        member.latency(new Latency(100, 0), 0);
        channel.writeAndFlush(message(1));
        member.restore();
        assertNull(member.latency());
        channel.writeAndFlush(message(2));
        assertEquals(List.of(), received(), "the second waits behind the first, as on a wire");
        Thread.sleep(150);
        assertEquals(List.of(1, 2), received());
        channel.writeAndFlush(message(3));
        assertEquals(List.of(3), received(), "nothing waits: at once again");
    }

    @Test
    void whatWaitsCountsAgainstTheChannelsWritabilitySoBackpressureHolds() throws Exception {
        member.latency(new Latency(100, 0), 0);
        ByteBuf large = Unpooled.buffer(128 * 1024).writeZero(128 * 1024);
        sent.add(large);
        channel.writeAndFlush(large);
        assertFalse(channel.isWritable(), "128 KiB waiting is over the high water mark");
        Thread.sleep(150);
        channel.runScheduledPendingTasks();
        ByteBuf out = channel.readOutbound();
        assertEquals(128 * 1024, out.readableBytes());
        out.release();
        assertTrue(channel.isWritable());
    }

    @Test
    void aClientThatLeavesLosesWhatWasOnItsWayAndItIsReleased() throws Exception {
        member.latency(new Latency(60_000, 0), 0);
        ByteBuf onItsWay = message(1);
        channel.writeAndFlush(onItsWay);
        channel.pipeline().fireChannelInactive();
        assertEquals(0, onItsWay.refCnt(), "released with the connection");
    }

    @Test
    void aProxyClosingClosesAtOnceWhateverWaits() {
        member.latency(new Latency(60_000, 0), 0);
        ByteBuf onItsWay = message(1);
        channel.writeAndFlush(onItsWay);
        member.close();
        channel.close();
        assertFalse(channel.isOpen(), "closed now, not in a minute");
        assertEquals(0, onItsWay.refCnt(), "released with the connection");
        assertNull(member.latency());
    }

    /** The bytes the client has received so far, in order, each buffer released once read. */
    private byte[] receivedBytes() {
        return drained(channel, channel::readOutbound);
    }

    /** The bytes the member's end has read so far, in order, each buffer released once read. */
    private static byte[] requestBytes(EmbeddedChannel on) {
        return drained(on, on::readInbound);
    }

    /** What {@code next} gives once {@code on}'s due tasks ran, in order, each buffer released once read. */
    private static byte[] drained(EmbeddedChannel on, java.util.function.Supplier<ByteBuf> next) {
        on.runPendingTasks();
        on.runScheduledPendingTasks();
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        for (ByteBuf buf = next.get(); buf != null; buf = next.get()) {
            byte[] piece = new byte[buf.readableBytes()];
            buf.readBytes(piece);
            bytes.writeBytes(piece);
            buf.release();
        }
        return bytes.toByteArray();
    }

    private ByteBuf counting(int length) {
        ByteBuf buf = Unpooled.buffer(length);
        for (int i = 0; i < length; i++) {
            buf.writeByte(i);
        }
        sent.add(buf);
        return buf;
    }

    @Test
    void aNarrowLinkHandsALargeWriteOverInPiecesNeverFasterThanItsRateAndInOrder() throws Exception {
        member.bandwidth(new Bandwidth(3_000), 0); // 30-byte pieces, one every 10 ms: 3,000 bytes take a second
        long started = System.nanoTime();
        channel.writeAndFlush(counting(3_000));
        byte[] all = takenAtMostAtTheRate(3_000, started, this::receivedBytes);
        for (int i = 0; i < all.length; i++) {
            assertEquals((byte) i, all[i], "byte " + i + " in its place");
        }
    }

    /**
     * Takes bytes from {@code take} until 3,000 have come, checking on each take that they came no faster than {@code
     * rate} bytes a second since {@code started}, and that they came spread over time; returns them in order.
     */
    private static byte[] takenAtMostAtTheRate(long rate, long started, java.util.function.Supplier<byte[]> take) throws Exception {
        int pieces = 0;
        java.io.ByteArrayOutputStream arrived = new java.io.ByteArrayOutputStream();
        while (arrived.size() < 3_000) {
            byte[] now = take.get();
            double elapsedSeconds = (System.nanoTime() - started) / 1e9;
            arrived.writeBytes(now);
            assertTrue(arrived.size() <= rate * elapsedSeconds,
                    arrived.size() + " bytes came after " + elapsedSeconds + " s: faster than " + rate + " a second");
            pieces += now.length > 0 ? 1 : 0;
            Thread.sleep(50);
        }
        assertTrue((System.nanoTime() - started) / 1_000_000 >= 3_000_000 / rate, "3,000 bytes at " + rate + " a second came too soon");
        assertTrue(pieces >= 5, "they came spread over time, not at once: in " + pieces + " takes");
        return arrived.toByteArray();
    }

    @Test
    void aLatencyOnANarrowLinkDelaysEachPieceFromWhenItIsCarried() throws Exception {
        member.latency(new Latency(200, 0), 0);
        member.bandwidth(new Bandwidth(10_000), 0); // 100-byte pieces, one every 10 ms
        long started = System.nanoTime();
        channel.writeAndFlush(counting(1_000)); // carried in 100 ms, each piece 200 ms later
        Thread.sleep(150);
        byte[] early = receivedBytes();
        double elapsedSeconds = (System.nanoTime() - started) / 1e9;
        assertTrue(early.length <= Math.max(0, 10_000 * (elapsedSeconds - 0.2)),
                early.length + " bytes arrived after " + elapsedSeconds + " s: a piece before its latency had passed");
        Thread.sleep(300);
        assertEquals(1_000 - early.length, receivedBytes().length);
    }

    @Test
    void aCloseOnANarrowLinkComesAfterTheLastPieceAndTheClientLeavingReleasesThePieces() throws Exception {
        member.bandwidth(new Bandwidth(2_000), 0); // 20-byte pieces: 200 bytes take 100 ms
        channel.writeAndFlush(counting(200));
        channel.pipeline().close();
        assertTrue(channel.pipeline().get(ClientLink.class).closedAtTheMembersEnd(), "the proxy's side has ended at once");
        assertTrue(channel.isOpen(), "the client sees the end only after the bytes before it");
        Thread.sleep(200);
        assertEquals(200, receivedBytes().length);
        assertFalse(channel.isOpen());

        EmbeddedChannel other = new EmbeddedChannel(new ClientLink(member));
        ByteBuf large = counting(10_000); // five seconds' worth
        other.writeAndFlush(large);
        assertTrue(large.refCnt() > 0, "its pieces hold it");
        other.pipeline().fireChannelInactive();
        assertEquals(0, large.refCnt(), "the pieces not yet sent are released with the connection");
        other.finishAndReleaseAll();
    }

    /** Each piece is held until it goes: a large write on a very narrow link is cut into at most 4,096, not millions. */
    @Test
    void aLargeWriteOnAVeryNarrowLinkIsCutIntoAFewThousandPiecesAtMost() {
        member.bandwidth(new Bandwidth(100), 0); // 1-byte pieces: a megabyte would have been a million of them
        ByteBuf large = counting(1024 * 1024);
        channel.writeAndFlush(large);
        ClientLink link = channel.pipeline().get(ClientLink.class);
        assertEquals(Bandwidth.MAX_PIECES_PER_WRITE, link.waitingOnTheLink(), "256-byte pieces");
        channel.pipeline().fireChannelInactive();
        assertEquals(0, large.refCnt(), "the pieces are released with the connection");
    }

    @Test
    void whatWaitsOnANarrowLinkCountsAgainstWritability() throws Exception {
        member.bandwidth(new Bandwidth(1024 * 1024), 0);
        ByteBuf large = counting(128 * 1024); // an eighth of a second's worth
        channel.writeAndFlush(large);
        assertFalse(channel.isWritable(), "128 KiB waiting is over the high water mark");
        Thread.sleep(300);
        assertEquals(128 * 1024, receivedBytes().length);
        assertTrue(channel.isWritable());
    }

    @Test
    void aNarrowLinkCarriesWhatTheClientSendsToTheMembersEndAtItsRateAndInOrder() throws Exception {
        member.bandwidth(new Bandwidth(3_000), 0);
        long started = System.nanoTime();
        channel.writeInbound(counting(2_000));
        channel.writeInbound(counting(1_000)); // behind the first, never beside it
        byte[] all = takenAtMostAtTheRate(3_000, started, () -> requestBytes(channel));
        for (int i = 0; i < all.length; i++) {
            assertEquals((byte) (i < 2_000 ? i : i - 2_000), all[i], "byte " + i + " in its place");
        }
    }

    @Test
    void aLatencyTowardsTheMemberDelaysWhatTheClientSendsInOrderButNoReply() throws Exception {
        member.latency(new Latency(200, 0, Direction.REQUESTS), 0);
        long started = System.nanoTime();
        channel.writeInbound(counting(100));
        channel.writeInbound(counting(50));
        channel.writeAndFlush(counting(30));
        assertEquals(30, receivedBytes().length, "a latency on requests delays no reply");
        byte[] early = requestBytes(channel);
        long elapsedMillis = (System.nanoTime() - started) / 1_000_000;
        assertTrue(early.length == 0 || elapsedMillis >= 200, early.length + " bytes reached the member's end after " + elapsedMillis + " ms");
        Thread.sleep(300);
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        all.writeBytes(early);
        all.writeBytes(requestBytes(channel));
        byte[] bytes = all.toByteArray();
        assertEquals(150, bytes.length);
        for (int i = 0; i < bytes.length; i++) {
            assertEquals((byte) (i < 100 ? i : i - 100), bytes[i], "byte " + i + " in its place");
        }

        member.latency(new Latency(100, 100, Direction.BOTH), 0); // each read 0 to 200 ms late, drawn apart
        EmbeddedChannel jittery = new EmbeddedChannel(new ClientLink(member));
        for (int i = 0; i < 30; i++) {
            jittery.writeInbound(Unpooled.wrappedBuffer(new byte[] {(byte) i}));
        }
        Thread.sleep(400);
        byte[] inOrder = requestBytes(jittery);
        assertEquals(30, inOrder.length);
        for (int i = 0; i < 30; i++) {
            assertEquals((byte) i, inOrder[i], "a jitter reorders nothing: read " + i);
        }
        jittery.finishAndReleaseAll();
    }

    @Test
    void aBandwidthOneWayLeavesTheOtherWayWide() {
        member.bandwidth(new Bandwidth(1_000, Direction.REPLIES), 0); // 3,000 bytes take three seconds
        ClientLink link = channel.pipeline().get(ClientLink.class);
        channel.writeInbound(counting(3_000));
        assertEquals(3_000, requestBytes(channel).length, "requests cross a bandwidth on replies at once");
        channel.writeAndFlush(counting(3_000));
        assertTrue(receivedBytes().length < 3_000, "the reply trickles");
        assertTrue(link.deliversLater());

        member.bandwidth(new Bandwidth(1_000, Direction.REQUESTS), 0);
        EmbeddedChannel other = new EmbeddedChannel(new ClientLink(member));
        assertFalse(other.pipeline().get(ClientLink.class).deliversLater(), "a reply would go at once");
        other.writeAndFlush(counting(3_000));
        assertEquals(3_000, drained(other, other::readOutbound).length, "replies cross a bandwidth on requests at once");
        other.writeInbound(counting(3_000));
        assertTrue(requestBytes(other).length < 3_000, "the request trickles");
        other.finishAndReleaseAll();
    }

    @Test
    void aNarrowLinkHoldingAWindowsWorthOfRequestsStopsTheProxyReadingUntilItHasRoom() throws Exception {
        member.bandwidth(new Bandwidth(1024 * 1024), 0);
        ClientLink link = channel.pipeline().get(ClientLink.class);
        channel.writeInbound(counting(RequestsOnTheLink.INITIAL_WINDOW_BYTES / 2));
        assertFalse(link.holdsRequests(), "half a window: the client may send on");
        channel.writeInbound(counting(RequestsOnTheLink.INITIAL_WINDOW_BYTES));
        assertTrue(link.holdsRequests(), "a window and a half held: the proxy reads no more of the client");
        Thread.sleep(300); // 96 KiB at a MiB a second: about 94 ms
        assertEquals(RequestsOnTheLink.INITIAL_WINDOW_BYTES * 3 / 2, requestBytes(channel).length);
        assertFalse(link.holdsRequests(), "carried: room again");
        // two windows: still held when a stall lets a piece or two be carried meanwhile, and not had the window grown
        // by what was carried (to two and a half)
        channel.writeInbound(counting(2 * RequestsOnTheLink.INITIAL_WINDOW_BYTES));
        assertTrue(link.holdsRequests(), "the rate, not a latency, held the link full: the window did not grow");
    }

    @Test
    void underALatencyOnRequestsTheWindowGrowsAsInSlowStartSoALargeInsertTakesAFewDelaysNotOnePerWindow() throws Exception {
        member.latency(new Latency(100, 0, Direction.REQUESTS), 0);
        ClientLink link = channel.pipeline().get(ClientLink.class);
        int initial = RequestsOnTheLink.INITIAL_WINDOW_BYTES;
        long carried = 0;
        for (int window = initial; window < RequestsOnTheLink.MAX_WINDOW_BYTES; window *= 2) {
            channel.writeInbound(counting(window - 1));
            assertFalse(link.holdsRequests(), "a byte short of a window of " + window + ": the client may send on");
            Thread.sleep(30); // so that the first read may pass alone: the window grows by the last byte all the same
            channel.writeInbound(counting(1));
            assertTrue(link.holdsRequests(), "a window of " + window + " held: the proxy reads no more of the client");
            carried += window;
            carried -= awaitRequestBytes(carried);
            assertEquals(0, carried, "all of it reached the member's end");
            assertFalse(link.holdsRequests());
        }
        channel.writeInbound(counting(RequestsOnTheLink.MAX_WINDOW_BYTES - 1));
        assertFalse(link.holdsRequests(), "grown to the largest window");
        channel.writeInbound(counting(1));
        assertTrue(link.holdsRequests());
        awaitRequestBytes(RequestsOnTheLink.MAX_WINDOW_BYTES);
        channel.writeInbound(counting(RequestsOnTheLink.MAX_WINDOW_BYTES));
        assertTrue(link.holdsRequests(), "it grows no further");
        awaitRequestBytes(RequestsOnTheLink.MAX_WINDOW_BYTES);
    }

    /** Waits up to 5 s for the member's end to have read {@code expected} bytes; returns how many it read. */
    private long awaitRequestBytes(long expected) throws InterruptedException {
        long read = 0;
        for (long end = System.nanoTime() + 5_000_000_000L; read < expected && System.nanoTime() < end; Thread.sleep(10)) {
            read += requestBytes(channel).length;
        }
        return read;
    }

    @Test
    void theClientsFinComesBehindWhatItSentAtTheRateButAResetOrTheProxysCloseDropsWhatTheLinkHeld() throws Exception {
        member.bandwidth(new Bandwidth(1_000), 0); // 500 bytes: half a second
        List<String> atTheMembersEnd = new java.util.concurrent.CopyOnWriteArrayList<>();
        EmbeddedChannel leaving = atTheMembersEnd(atTheMembersEnd);
        leaving.writeInbound(counting(500));
        leaving.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE); // the client's FIN, right behind
        leaving.runPendingTasks();
        assertTrue(leaving.isOpen(), "the FIN is still behind what the link carries");
        assertTrue(bytesRead(atTheMembersEnd) < 500, "what it sent crosses at the rate, not at once: " + atTheMembersEnd);
        for (long end = System.nanoTime() + 5_000_000_000L; leaving.isOpen() && System.nanoTime() < end; Thread.sleep(20)) {
            leaving.runScheduledPendingTasks();
            leaving.runPendingTasks();
        }
        assertEquals(500, bytesRead(atTheMembersEnd), "all it sent is read before its end: " + atTheMembersEnd);
        assertFalse(leaving.isOpen(), "then the proxy closes its side");
        assertEquals("closed", atTheMembersEnd.get(atTheMembersEnd.size() - 1));
        assertFalse(atTheMembersEnd.contains("input shut down"), "the decoders hear of the end from the close alone");
        leaving.finishAndReleaseAll();

        atTheMembersEnd.clear();
        EmbeddedChannel resetting = atTheMembersEnd(atTheMembersEnd);
        ByteBuf lost = counting(500);
        resetting.writeInbound(lost);
        resetting.pipeline().fireChannelInactive(); // the client's reset
        assertEquals(0, lost.refCnt(), "what the link had not carried is lost with the reset, and released");
        assertEquals(List.of("closed"), atTheMembersEnd);
        resetting.finishAndReleaseAll();

        ByteBuf held = counting(500);
        channel.writeInbound(held);
        channel.close(); // the proxy closes: the member's end is gone
        assertEquals(0, held.refCnt(), "what the link held is released with the connection");
        assertEquals(0, requestBytes(channel).length);
    }

    /** A link whose member's end notes "N bytes" per read, "closed", and "input shut down" should that event reach it. */
    private EmbeddedChannel atTheMembersEnd(List<String> notes) {
        return new EmbeddedChannel(new ClientLink(member), new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                notes.add(((ByteBuf) msg).readableBytes() + " bytes");
                ((ByteBuf) msg).release();
            }

            @Override
            public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
                notes.add(event instanceof ChannelInputShutdownEvent ? "input shut down" : event.toString());
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                notes.add("closed");
            }
        });
    }

    private static int bytesRead(List<String> notes) {
        return notes.stream().filter(s -> s.endsWith("bytes")).mapToInt(s -> Integer.parseInt(s.split(" ")[0])).sum();
    }

    /** A delivery that notes what it was told. */
    private static final class NotedDelivery implements Delivery {
        final List<String> told = new ArrayList<>();

        @Override
        public void arrived() {
            told.add("arrived");
        }

        @Override
        public void lost() {
            told.add("lost");
        }
    }

    @Test
    void aReplyOnANarrowLinkArrivesWithItsLastPieceAndIsLostIfTheClientLeavesFirst() throws Exception {
        member.bandwidth(new Bandwidth(2_000), 0); // 200 bytes: 100 ms
        ClientLink link = channel.pipeline().get(ClientLink.class);
        assertTrue(link.deliversLater(), "a narrow link delivers a write later");
        channel.writeAndFlush(counting(200));
        NotedDelivery reply = new NotedDelivery();
        link.whenArrived(reply);
        assertEquals(List.of(), reply.told, "not before its last piece goes");
        Thread.sleep(150);
        assertEquals(200, receivedBytes().length);
        assertEquals(List.of("arrived"), reply.told);

        channel.writeAndFlush(counting(2_000)); // a second
        NotedDelivery cut = new NotedDelivery();
        link.whenArrived(cut);
        channel.pipeline().fireChannelInactive(); // the client left
        assertEquals(List.of("lost"), cut.told);
    }

    @Test
    void aReplyOnASlowLinkArrivesAfterItsLatencyAndIsLostIfTheClientLeavesWhileItIsOnItsWay() throws Exception {
        ClientLink link = channel.pipeline().get(ClientLink.class);
        assertFalse(link.deliversLater(), "a link as it was delivers at once");
        NotedDelivery atOnce = new NotedDelivery();
        channel.writeAndFlush(counting(10));
        link.whenArrived(atOnce);
        assertEquals(List.of("arrived"), atOnce.told);
        assertEquals(10, receivedBytes().length);

        member.latency(new Latency(100, 0), 0);
        assertTrue(link.deliversLater(), "a slow link delivers a write later");
        channel.writeAndFlush(counting(10));
        NotedDelivery reply = new NotedDelivery();
        link.whenArrived(reply);
        assertEquals(List.of(), reply.told, "on its way: not arrived yet");
        Thread.sleep(150);
        assertEquals(10, receivedBytes().length);
        assertEquals(List.of("arrived"), reply.told);

        channel.writeAndFlush(counting(10)); // a second, on its way when the client gives up and leaves
        NotedDelivery late = new NotedDelivery();
        link.whenArrived(late);
        channel.pipeline().fireChannelInactive();
        assertEquals(List.of("lost"), late.told, "the client left before it arrived: it never had it");
    }

    @Test
    void aResetOnANarrowLinkThrowsAwayWhatItHadNotCarriedButWhatIsOnItsWayArrives() throws Exception {
        EmbeddedChannel resettable = new EmbeddedChannel(DefaultChannelId.newInstance(), false,
                new LingeringConfig(), new ClientLink(member));
        member.latency(new Latency(100, 0), 0);
        member.bandwidth(new Bandwidth(2_000), 0); // 20-byte pieces, one every 10 ms
        ClientLink link = resettable.pipeline().get(ClientLink.class);
        resettable.writeAndFlush(counting(100)); // carried in 50 ms, arrives 100 ms after
        NotedDelivery first = new NotedDelivery();
        link.whenArrived(first);
        resettable.writeAndFlush(counting(20_000)); // ten seconds more
        NotedDelivery second = new NotedDelivery();
        link.whenArrived(second);
        Thread.sleep(100); // the first carried, on its way; the second barely begun
        resettable.config().setOption(ChannelOption.SO_LINGER, 0);
        resettable.pipeline().close(); // (the embedded channel's own close would cancel what is scheduled)
        assertEquals(List.of("lost"), second.told, "a reset throws away what the link had not carried");
        Thread.sleep(150);
        byte[] arrived = drained(resettable, resettable::readOutbound);
        assertTrue(arrived.length >= 100 && arrived.length < 20_100, "the first arrived, and only the second's start: " + arrived.length);
        assertEquals(List.of("arrived"), first.told);
        assertFalse(resettable.isOpen(), "the reset came behind what was on its way");
        resettable.finishAndReleaseAll();
    }

    /** An embedded channel's config that keeps SO_LINGER, so that a close can be a reset (its own channel only lends it defaults). */
    private static final class LingeringConfig extends io.netty.channel.DefaultChannelConfig {
        private int linger = -1;

        LingeringConfig() {
            super(new EmbeddedChannel());
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> T getOption(io.netty.channel.ChannelOption<T> option) {
            return option == ChannelOption.SO_LINGER ? (T) Integer.valueOf(linger) : super.getOption(option);
        }

        @Override
        public <T> boolean setOption(io.netty.channel.ChannelOption<T> option, T value) {
            if (option == ChannelOption.SO_LINGER) {
                linger = (Integer) value;
                return true;
            }
            return super.setOption(option, value);
        }
    }

    /** The member's idle timeout begun, as MemberListener tells each connection. */
    private ClientLink idleAfter(long millis, IdleTimeout.Then then) {
        member.idleTimeout(new IdleTimeout(millis, then), 0);
        ClientLink link = channel.pipeline().get(ClientLink.class);
        link.idleTimeoutBegan();
        return link;
    }

    @Test
    void aConnectionIdleForTheTimeoutIsForgottenTheProxysSideEndsAndWhatTheClientSendsIsDropped() throws Exception {
        List<String> upTheMembersEnd = new ArrayList<>();
        channel.pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                upTheMembersEnd.add("inactive");
            }
        });
        ClientLink link = idleAfter(50, IdleTimeout.Then.DROP);
        Thread.sleep(100);
        channel.runScheduledPendingTasks();
        assertTrue(link.closedAtTheMembersEnd(), "forgotten after 50 ms idle");
        assertEquals(List.of("inactive"), upTheMembersEnd, "the proxy's side ended");
        ByteBuf late = message(1);
        channel.writeInbound(late);
        assertNull(channel.readInbound(), "dropped");
        assertEquals(0, late.refCnt());
        ByteBuf reply = message(2);
        channel.writeAndFlush(reply);
        assertEquals(List.of(), received(), "what the member's side sends is lost too");
        channel.pipeline().close();
        assertTrue(channel.isOpen(), "no end is sent: the client is told nothing");
    }

    @Test
    void withResetWhatTheClientSendsOnAForgottenConnectionMeetsAReset() throws Exception {
        ClientLink link = idleAfter(50, IdleTimeout.Then.RESET);
        Thread.sleep(100);
        channel.runScheduledPendingTasks();
        assertTrue(link.closedAtTheMembersEnd());
        assertTrue(channel.isOpen(), "until the client sends");
        channel.writeInbound(message(1));
        assertFalse(channel.isOpen(), "reset");
    }

    @Test
    void whatCrossesTheLinkEitherWayKeepsItAndAnEndedIdleTimeoutForgetsNothing() throws Exception {
        ClientLink link = idleAfter(150, IdleTimeout.Then.DROP);
        for (int i = 0; i < 8; i++) { // 400 ms, never 150 ms without a message
            Thread.sleep(50);
            if (i % 2 == 0) {
                channel.writeAndFlush(message(i));
                received();
            } else {
                channel.writeInbound(message(i));
                ByteBuf in = channel.readInbound();
                in.release();
            }
            channel.runScheduledPendingTasks();
        }
        assertFalse(link.closedAtTheMembersEnd(), "kept busy, it is kept");
        member.restore();
        Thread.sleep(250);
        channel.runScheduledPendingTasks();
        assertFalse(link.closedAtTheMembersEnd(), "restored before it went idle: nothing forgotten");
    }
}
