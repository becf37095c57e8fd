package io.blackpipe.topology;

import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import javax.naming.Context;
import javax.naming.NameNotFoundException;
import javax.naming.NamingEnumeration;
import javax.naming.NamingException;
import javax.naming.directory.Attribute;
import javax.naming.directory.DirContext;
import javax.naming.directory.InitialDirContext;

/**
 * DNS lookups through the JDK's JNDI DNS provider, as the MongoDB Java driver makes them: no
 * dependency beyond the JDK.
 */
final class DnsRecords {
    /**
     * The system's resolvers: no provider URL, so JNDI's default "dns:" applies, unless the JVM
     * was started with -Djava.naming.provider.url (which the Java driver in the same JVM follows too).
     */
    static final DnsRecords SYSTEM = new DnsRecords(null);

    private final String providerUrl;

    /** @param providerUrl a JNDI DNS URL such as "dns://127.0.0.1:5353", or null for the system's resolvers */
    DnsRecords(String providerUrl) {
        this.providerUrl = providerUrl;
    }

    /**
     * The data of {@code name}'s records of {@code type}, as JNDI prints them (SRV: "priority
     * weight port target."; TXT: the record's character-strings separated by spaces, quoted when
     * they hold one); empty when the name exists but has none of that type.
     *
     * @throws NameNotFoundException when the name does not exist (NXDOMAIN)
     * @throws NamingException on any other DNS failure (timeout, SERVFAIL, a malformed name)
     */
    List<String> lookup(String name, String type) throws NamingException {
        Hashtable<String, String> env = new Hashtable<>();
        env.put(Context.INITIAL_CONTEXT_FACTORY, "com.sun.jndi.dns.DnsContextFactory");
        if (providerUrl != null) {
            env.put(Context.PROVIDER_URL, providerUrl);
        }
        DirContext context = new InitialDirContext(env);
        try {
            Attribute records = context.getAttributes(name, new String[] {type}).get(type);
            List<String> data = new ArrayList<>();
            if (records != null) {
                NamingEnumeration<?> values = records.getAll();
                while (values.hasMore()) {
                    data.add(String.valueOf(values.next()));
                }
            }
            return data;
        } finally {
            context.close();
        }
    }

    /** A lookup's failure in a few words, with its cause (e.g. a timeout) when JNDI kept one. */
    static String describe(NamingException e) {
        String explanation = e.getExplanation() != null ? e.getExplanation() : e.getClass().getSimpleName();
        return e.getRootCause() == null ? explanation : explanation + " (" + e.getRootCause() + ")";
    }
}
