package io.blackpipe.testing;

import com.github.luben.zstd.Zstd;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Locale;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;
import org.xerial.snappy.Snappy;

/**
 * The OP_COMPRESSED compressors a {@link ScriptedMongod} understands, with their wire ids and
 * names as they appear in the handshake's {@code compression} array.
 *
 * <p>Formats are the ones mongod uses: snappy is the raw (unframed) block format, zlib is a
 * zlib-wrapped deflate stream, zstd is a single zstd frame.
 */
public enum ScriptedMongodCompressor {
    NOOP(0, "noop"),
    SNAPPY(1, "snappy"),
    ZLIB(2, "zlib"),
    ZSTD(3, "zstd");

    private final int id;
    private final String wireName;

    ScriptedMongodCompressor(int id, String wireName) {
        this.id = id;
        this.wireName = wireName;
    }

    /** The compressorId byte of an OP_COMPRESSED header. */
    public int id() {
        return id;
    }

    /** The name used in the handshake {@code compression} list (and in {@code compressors=}). */
    public String wireName() {
        return wireName;
    }

    /** The compressor with this wire id, or null if the id is unknown. */
    public static ScriptedMongodCompressor byId(int id) {
        for (ScriptedMongodCompressor c : values()) {
            if (c.id == id) {
                return c;
            }
        }
        return null;
    }

    /** The compressor with this handshake name (case-insensitive), or null if unknown. */
    public static ScriptedMongodCompressor byName(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        for (ScriptedMongodCompressor c : values()) {
            if (c.wireName.equals(lower)) {
                return c;
            }
        }
        return null;
    }

    public byte[] compress(byte[] input) throws IOException {
        switch (this) {
            case NOOP:
                return input.clone();
            case SNAPPY:
                return Snappy.compress(input);
            case ZLIB: {
                Deflater deflater = new Deflater(Deflater.DEFAULT_COMPRESSION);
                try {
                    deflater.setInput(input);
                    deflater.finish();
                    ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(64, input.length / 2));
                    byte[] chunk = new byte[8192];
                    while (!deflater.finished()) {
                        int n = deflater.deflate(chunk);
                        out.write(chunk, 0, n);
                    }
                    return out.toByteArray();
                } finally {
                    deflater.end();
                }
            }
            case ZSTD:
                return Zstd.compress(input);
            default:
                throw new IllegalStateException("unreachable: " + this);
        }
    }

    /**
     * Decompresses {@code input}, which must expand to exactly {@code uncompressedSize} bytes
     * (the OP_COMPRESSED header's uncompressedSize); anything else is a protocol error.
     */
    public byte[] decompress(byte[] input, int uncompressedSize) throws IOException {
        byte[] out;
        switch (this) {
            case NOOP:
                out = input.clone();
                break;
            case SNAPPY:
                if (!Snappy.isValidCompressedBuffer(input)) {
                    throw new IOException("invalid snappy block");
                }
                out = Snappy.uncompress(input);
                break;
            case ZLIB: {
                Inflater inflater = new Inflater();
                try {
                    inflater.setInput(input);
                    out = new byte[uncompressedSize];
                    int n = 0;
                    while (n < uncompressedSize && !inflater.finished()) {
                        int got = inflater.inflate(out, n, uncompressedSize - n);
                        if (got == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
                            break;
                        }
                        n += got;
                    }
                    if (n != uncompressedSize || !inflater.finished()) {
                        throw new IOException("zlib stream inflated to " + n + " bytes (finished="
                                + inflater.finished() + "), header said " + uncompressedSize);
                    }
                } catch (DataFormatException e) {
                    throw new IOException("invalid zlib stream: " + e.getMessage(), e);
                } finally {
                    inflater.end();
                }
                break;
            }
            case ZSTD:
                out = Zstd.decompress(input, uncompressedSize);
                break;
            default:
                throw new IllegalStateException("unreachable: " + this);
        }
        if (out.length != uncompressedSize) {
            throw new IOException(wireName + " payload decompressed to " + out.length
                    + " bytes, header said " + uncompressedSize);
        }
        return out;
    }
}
