package io.blackpipe.pipe;

/**
 * A role (primary, secondary) no member has now, as while a simulated set elects: a state that passes, not a name that
 * is wrong. An IllegalStateException, as a failover then is: the admin API answers both 409 (the member actions answered
 * 400, and a connections reset "reset 0"), and the in-process and remote Java APIs throw the same.
 */
public final class NoMemberInRole extends IllegalStateException {
    NoMemberInRole(String message) {
        super(message);
    }
}
