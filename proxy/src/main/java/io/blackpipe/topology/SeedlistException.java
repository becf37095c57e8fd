package io.blackpipe.topology;

/**
 * The DNS records of a mongodb+srv:// host gave no seed list to use: no SRV records, a target
 * outside the host's domain, a TXT record that is not allowed, a DNS error. The URI itself was
 * well formed (that would be an {@link IllegalArgumentException}); what DNS answered was not.
 */
public final class SeedlistException extends IllegalStateException {
    public SeedlistException(String message) {
        super(message);
    }
}
