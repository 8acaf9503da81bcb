package io.mongo2pc.cli;

/** The CLI's exit codes (stable: scripts and tests outside this repository rely on them). */
public final class ExitCodes {
    /** Success. */
    public static final int OK = 0;
    /** Not ok ({@code verify} found a problem) or an unexpected / infrastructure error. */
    public static final int NOT_OK = 1;
    /** Bad input: usage errors, bad amounts or ids, unknown accounts; no data folder where a command needs one. */
    public static final int BAD_INPUT = 2;
    /** The transaction was canceled, or cannot be canceled. */
    public static final int CANCELED = 3;
    /** Not found: {@code read}'s document (in the committed view, with --committed), {@code inspect}'s and {@code cancel}'s transaction. */
    public static final int NOT_FOUND = 4;

    private ExitCodes() { }
}
