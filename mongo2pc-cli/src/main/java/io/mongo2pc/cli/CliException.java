package io.mongo2pc.cli;

/** A failure a command reports as one line on stderr and turns into an exit code. */
public final class CliException extends RuntimeException {
    private final int exitCode;

    CliException(int exitCode, String message) {
        this(exitCode, message, null);
    }

    CliException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    public static CliException badInput(String message) {
        return new CliException(ExitCodes.BAD_INPUT, message);
    }

    int exitCode() {
        return exitCode;
    }
}
