package io.blackpipe;

import org.bson.BsonDocument;
import org.bson.codecs.BsonValueCodecProvider;
import org.bson.codecs.DocumentCodecProvider;
import org.bson.codecs.IterableCodecProvider;
import org.bson.codecs.MapCodecProvider;
import org.bson.codecs.ValueCodecProvider;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.codecs.jsr310.Jsr310CodecProvider;
import org.bson.conversions.Bson;

/**
 * Turns a user's {@link Bson} (the driver's {@code Filters}, a {@code Document}) into a document on the bson their tests
 * bring, which Maven may pick over blackpipe's: {@code Bson.toBsonDocument()} and {@code Bson.DEFAULT_CODEC_REGISTRY}
 * came in bson 4.2, and on the bson of drivers 3.12 and 4.0 {@code whereCommand} failed with NoSuchMethodError.
 */
final class UsersCodecs {
    private static final CodecRegistry CODECS = defaultRegistry();

    private UsersCodecs() {
    }

    static BsonDocument toDocument(Bson fields) {
        return fields.toBsonDocument(BsonDocument.class, CODECS);
    }

    /** bson's own default (4.2 and later), else one of the providers bson 3.12 and 4.0 have. */
    private static CodecRegistry defaultRegistry() {
        try {
            return (CodecRegistry) Bson.class.getField("DEFAULT_CODEC_REGISTRY").get(null);
        } catch (ReflectiveOperationException e) {
            return CodecRegistries.fromProviders(new ValueCodecProvider(), new BsonValueCodecProvider(), new DocumentCodecProvider(),
                    new IterableCodecProvider(), new MapCodecProvider(), new Jsr310CodecProvider());
        }
    }
}
