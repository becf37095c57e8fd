package io.blackpipe.wire.auth;

/**
 * The control client could not authenticate: the server said no (its code name, code and
 * message are in the message) or did not prove it knows the password. Never carries the password.
 */
public final class AuthenticationException extends Exception {
    public AuthenticationException(String message) {
        super(message);
    }

    public AuthenticationException(String message, Throwable cause) {
        super(message, cause);
    }
}
