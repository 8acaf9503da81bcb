package io.mongo2pc;

/**
 * What one recovery pass did: transactions it finished as done, finished as canceled, and stale
 * ones it left (another process won the takeover, or their format is unknown). Immutable.
 */
public record RecoveryReport(int rolledForward, int canceled, int skipped) {
    public RecoveryReport plus(RecoveryReport other) {
        return new RecoveryReport(rolledForward + other.rolledForward, canceled + other.canceled, skipped + other.skipped);
    }

    public int finished() {
        return rolledForward + canceled;
    }
}
