package io.blackpipe.cli;

import io.blackpipe.topology.UpstreamUri;
import java.util.Objects;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * A usage error never shows an upstream URI's password: picocli quotes what it could not read, and a misspelt
 * {@code --upstrem 'mongodb://alice:pw@db1/'}, or the URI given to another option, put the password in clear in a
 * terminal or a CI log. Every mongodb:// or mongodb+srv:// URI in the error is masked as the proxy's own messages mask it.
 */
final class SecretsMasked implements IParameterExceptionHandler {
    private final IParameterExceptionHandler next;

    SecretsMasked(IParameterExceptionHandler next) {
        this.next = next;
    }

    @Override
    public int handleParseException(ParameterException e, String[] args) throws Exception {
        String shown = masked(e.getMessage());
        if (Objects.equals(shown, e.getMessage())) {
            return next.handleParseException(e, args);
        }
        // rebuilt without the original as its cause, which would be printed with it; an unknown option keeps its kind,
        // for picocli's "Possible solutions"
        ParameterException clean = e instanceof UnmatchedArgumentException unmatched
                ? new UnmatchedArgumentException(e.getCommandLine(), unmatched.getUnmatched().stream().map(SecretsMasked::masked).toList())
                : new ParameterException(e.getCommandLine(), shown, null, e.getArgSpec(), e.getValue() == null ? null : masked(e.getValue()));
        clean.setStackTrace(e.getStackTrace());
        return next.handleParseException(clean, args);
    }

    static String masked(String text) {
        return UpstreamUri.maskedWithin(text);
    }
}
