package io.blackpipe.fault;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** A scenario file's text, as every path that reads one takes it (the CLI, BlackPipe, RemoteBlackPipe). */
public final class ScenarioText {
    private ScenarioText() {
    }

    /**
     * The text of {@code file}, named {@code source} in errors: one over the size limit, or not UTF-8, is refused, the
     * latter at the line of its first stray byte (Java's own message was "Input length = 1").
     */
    public static String read(Path file, String source) throws IOException {
        if (Files.size(file) > ScenarioLoader.MAX_SIZE) {
            throw new ScenarioException(source, 1, "(file)", "is larger than " + ScenarioLoader.MAX_SIZE + " bytes");
        }
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder(); // reports a malformed byte rather than replacing it
        CoderResult result = decoder.decode(in, out, true);
        if (result.isError()) {
            int line = 1;
            for (int i = 0; i < in.position(); i++) {
                line += bytes[i] == '\n' ? 1 : 0;
            }
            throw new ScenarioException(source, line, "(file)", String.format("is not UTF-8 text (the byte 0x%02X on this line);"
                    + " save it as UTF-8", bytes[in.position()] & 0xff));
        }
        decoder.flush(out);
        return out.flip().toString();
    }
}
