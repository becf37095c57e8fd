package io.blackpipe.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A DNS server for tests, on UDP 127.0.0.1, that answers SRV and TXT questions from its records
 * (RFC 1035 wire format): the records of the name asked, NXDOMAIN for a name it has none for,
 * SERVFAIL for a name told to fail. Point JNDI at it with {@link #providerUrl()}; there is no
 * network for real lookups where the tests run.
 */
public final class ScriptedDns implements AutoCloseable {
    private static final int TYPE_TXT = 16;
    private static final int TYPE_SRV = 33;
    private static final int RCODE_SERVER_FAILURE = 2;
    private static final int RCODE_NAME_ERROR = 3;
    /** Without EDNS a UDP answer holds at most 512 bytes; these tests stay far below it. */
    private static final int UDP_LIMIT = 512;

    private record Record(int type, byte[] data) {
    }

    private final DatagramSocket socket;
    private final Map<String, List<Record>> records = new ConcurrentHashMap<>();
    private final Set<String> failing = ConcurrentHashMap.newKeySet();
    private final List<String> questions = new CopyOnWriteArrayList<>();
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();

    public ScriptedDns() throws SocketException {
        socket = new DatagramSocket(0, InetAddress.getLoopbackAddress());
        Thread thread = new Thread(this::serve, "scripted-dns-" + socket.getLocalPort());
        thread.setDaemon(true);
        thread.start();
    }

    /** "dns://127.0.0.1:PORT", the JNDI provider URL of this server. */
    public String providerUrl() {
        return "dns://127.0.0.1:" + socket.getLocalPort();
    }

    /** Adds an SRV record (priority 0, weight 5: clients ignore both) under {@code name}. */
    public ScriptedDns srv(String name, int port, String target) {
        ByteArrayOutputStream data = new ByteArrayOutputStream();
        writeShort(data, 0);
        writeShort(data, 5);
        writeShort(data, port);
        writeName(data, target);
        return add(name, new Record(TYPE_SRV, data.toByteArray()));
    }

    /** Adds one TXT record under {@code name} made of these character-strings, in order. */
    public ScriptedDns txt(String name, String... strings) {
        ByteArrayOutputStream data = new ByteArrayOutputStream();
        for (String s : strings) {
            byte[] bytes = s.getBytes(StandardCharsets.US_ASCII);
            if (bytes.length > 255) {
                throw new IllegalArgumentException("a TXT character-string holds at most 255 bytes: " + s);
            }
            data.write(bytes.length);
            data.writeBytes(bytes);
        }
        return add(name, new Record(TYPE_TXT, data.toByteArray()));
    }

    /** Questions about {@code name} get SERVFAIL: a DNS error rather than an answer. */
    public ScriptedDns failing(String name) {
        failing.add(key(name));
        return this;
    }

    /** Every question asked so far, as "TYPE name" (e.g. "SRV _mongodb._tcp.cluster0.example.com"). */
    public List<String> questions() {
        return List.copyOf(questions);
    }

    /** What went wrong while serving (a malformed question, an answer too long for UDP). */
    public List<Throwable> errors() {
        return List.copyOf(errors);
    }

    private ScriptedDns add(String name, Record record) {
        records.computeIfAbsent(key(name), k -> new CopyOnWriteArrayList<>()).add(record);
        return this;
    }

    private static String key(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        return lower.endsWith(".") ? lower.substring(0, lower.length() - 1) : lower;
    }

    private void serve() {
        byte[] buffer = new byte[UDP_LIMIT];
        while (!socket.isClosed()) {
            DatagramPacket packet = new DatagramPacket(buffer, buffer.length);
            try {
                socket.receive(packet);
                byte[] answer = answer(ByteBuffer.wrap(packet.getData(), 0, packet.getLength()));
                socket.send(new DatagramPacket(answer, answer.length, packet.getSocketAddress()));
            } catch (IOException e) {
                if (!socket.isClosed()) {
                    errors.add(e);
                }
            } catch (RuntimeException e) {
                errors.add(e); // no answer: the client times out, and the test reads errors()
            }
        }
    }

    private byte[] answer(ByteBuffer query) {
        int id = query.getShort() & 0xffff;
        int flags = query.getShort() & 0xffff;
        int questionCount = query.getShort() & 0xffff;
        if (questionCount != 1) {
            throw new IllegalStateException("a query with " + questionCount + " questions");
        }
        query.position(12);
        int questionStart = query.position();
        String name = readName(query);
        int type = query.getShort() & 0xffff;
        query.getShort(); // class IN
        byte[] question = new byte[query.position() - questionStart];
        query.get(questionStart, question);
        questions.add((type == TYPE_SRV ? "SRV" : type == TYPE_TXT ? "TXT" : "TYPE" + type) + " " + name);

        List<Record> answers = new ArrayList<>();
        int rcode = 0;
        if (failing.contains(key(name))) {
            rcode = RCODE_SERVER_FAILURE;
        } else if (!records.containsKey(key(name))) {
            rcode = RCODE_NAME_ERROR;
        } else {
            records.get(key(name)).stream().filter(r -> r.type() == type).forEach(answers::add);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        writeShort(out, id);
        // QR, the query's opcode and RD, authoritative, recursion available, the response code
        writeShort(out, 0x8000 | (flags & 0x7900) | 0x0400 | 0x0080 | rcode);
        writeShort(out, 1);
        writeShort(out, answers.size());
        writeShort(out, 0);
        writeShort(out, 0);
        out.writeBytes(question);
        for (Record record : answers) {
            writeShort(out, 0xc00c); // the name: a pointer to the question's, at offset 12
            writeShort(out, record.type());
            writeShort(out, 1);
            writeShort(out, 0);
            writeShort(out, 60); // TTL 60 s
            writeShort(out, record.data().length);
            out.writeBytes(record.data());
        }
        if (out.size() > UDP_LIMIT) {
            throw new IllegalStateException("the answer for " + name + " needs " + out.size() + " bytes, over UDP's 512");
        }
        return out.toByteArray();
    }

    /** A question's name: labels, uncompressed (clients do not compress questions). */
    private static String readName(ByteBuffer in) {
        StringBuilder name = new StringBuilder();
        for (int length = in.get() & 0xff; length != 0; length = in.get() & 0xff) {
            if (length > 63) {
                throw new IllegalStateException("a compressed or oversized label in a question");
            }
            byte[] label = new byte[length];
            in.get(label);
            name.append(name.length() == 0 ? "" : ".").append(new String(label, StandardCharsets.US_ASCII));
        }
        return name.toString();
    }

    private static void writeName(ByteArrayOutputStream out, String name) {
        for (String label : key(name).split("\\.")) {
            out.write(label.length());
            out.writeBytes(label.getBytes(StandardCharsets.US_ASCII));
        }
        out.write(0);
    }

    private static void writeShort(ByteArrayOutputStream out, int value) {
        out.write(value >>> 8 & 0xff);
        out.write(value & 0xff);
    }

    @Override
    public void close() {
        socket.close();
    }
}
