package io.mongo2pc.cli;

/** A console API request that fails: the HTTP status and a code for programs, beside the message for people. */
final class ConsoleError extends RuntimeException {
    private final int status;
    private final String code;

    ConsoleError(int status, String code, String message) {
        super(message);
        this.status = status;
        this.code = code;
    }

    static ConsoleError badRequest(String message) {
        return new ConsoleError(400, "BAD_REQUEST", message);
    }

    static ConsoleError notFound(String message) {
        return new ConsoleError(404, "NOT_FOUND", message);
    }

    int status() {
        return status;
    }

    String code() {
        return code;
    }
}
