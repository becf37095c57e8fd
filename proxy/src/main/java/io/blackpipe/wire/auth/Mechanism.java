package io.blackpipe.wire.auth;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The authentication mechanisms a MongoDB connection string may name (authMechanism=), and
 * which of them the proxy's control client can use. The others are known, so a URI naming
 * them is not a typo, but the control client cannot speak them.
 */
public enum Mechanism {
    SCRAM_SHA_256("SCRAM-SHA-256", true, "admin"),
    SCRAM_SHA_1("SCRAM-SHA-1", true, "admin"),
    MONGODB_X509("MONGODB-X509", true, "$external"),
    GSSAPI("GSSAPI", false, "$external"),
    PLAIN("PLAIN", false, "$external"),
    MONGODB_AWS("MONGODB-AWS", false, "$external"),
    MONGODB_OIDC("MONGODB-OIDC", false, "$external"),
    /** Removed from MongoDB 4.0; SCRAM-SHA-1 replaced it. */
    MONGODB_CR("MONGODB-CR", false, "admin");

    private final String wireName;
    private final boolean supported;
    private final String defaultSource;

    Mechanism(String wireName, boolean supported, String defaultSource) {
        this.wireName = wireName;
        this.supported = supported;
        this.defaultSource = defaultSource;
    }

    /** The name as MongoDB spells it (authMechanism=, saslStart's mechanism). */
    public String wireName() {
        return wireName;
    }

    /** Whether the control client can authenticate with it. */
    public boolean supported() {
        return supported;
    }

    /** Where the user lives when neither authSource nor a URI database says (the Authentication spec's defaults). */
    String defaultSource() {
        return defaultSource;
    }

    /** Whether the user is looked up in $external whatever the URI's database says. */
    boolean external() {
        return this == MONGODB_X509 || this == GSSAPI || this == MONGODB_AWS || this == MONGODB_OIDC;
    }

    /**
     * @throws IllegalArgumentException when {@code name} is not a MongoDB mechanism, listing the ones that are
     */
    public static Mechanism named(String name) {
        for (Mechanism mechanism : values()) {
            if (mechanism.wireName.equalsIgnoreCase(name.trim())) {
                return mechanism;
            }
        }
        throw new IllegalArgumentException("the upstream URI's authMechanism=" + name + " is not a MongoDB authentication mechanism"
                + " (expected one of " + Arrays.stream(values()).map(Mechanism::wireName).collect(Collectors.joining(", ")) + ")");
    }

    /** The mechanisms the control client can use, for messages. */
    static String supportedNames() {
        return Arrays.stream(values()).filter(Mechanism::supported).map(Mechanism::wireName)
                .collect(Collectors.joining(", "));
    }

    @Override
    public String toString() {
        return wireName;
    }
}
