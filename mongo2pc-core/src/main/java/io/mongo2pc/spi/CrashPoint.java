package io.mongo2pc.spi;

import java.util.Locale;

/**
 * A named place in the protocol: just before or just after one of its writes. {@code participant}
 * is the index of the operation a participant write belongs to, or -1 for writes to the
 * transaction document. Immutable.
 */
public record CrashPoint(Step step, Phase phase, int participant) {

    /** The writes of the protocol, in the order a transaction makes them. */
    public enum Step {
        /** Insert of the transaction document (as {@code pending}, or {@code initial} when queued). */
        INSERT,
        /** Claim of a queued transaction: {@code initial -> pending}. */
        CLAIM,
        /** Takeover of a stale transaction by a new owner (epoch + 1). */
        TAKEOVER,
        /** An operation applied to a participant, with the transaction's marker. */
        APPLY,
        /** The commit point: {@code pending -> applied}. */
        COMMIT,
        /** A participant's marker removed after commit. */
        RELEASE,
        /** {@code applied -> done}. */
        FINISH,
        /** {@code pending -> canceling}. */
        BEGIN_CANCEL,
        /** An applied operation undone on a participant, with its marker removed. */
        UNDO,
        /** {@code canceling -> canceled}. */
        FINISH_CANCEL,
        /**
         * Two-round commit: a resolver's insert of a canceled document for a transaction whose
         * prepares have no transaction document past their deadline (participant -1).
         */
        TOMBSTONE,
        /**
         * Two-round commit: a marker of another transaction met and resolved by a writer, a reader
         * or the sweep: rolled forward (committed) or undone (canceled, abandoned) (participant -1).
         */
        RESOLVE,
        /**
         * Two-round commit, round 1b: an update's change applied, with its before-image, to the
         * document its take locked (participant: the operation's index).
         */
        CHANGE
    }

    public enum Phase { BEFORE, AFTER }

    public static CrashPoint before(Step step, int participant) {
        return new CrashPoint(step, Phase.BEFORE, participant);
    }

    public static CrashPoint after(Step step, int participant) {
        return new CrashPoint(step, Phase.AFTER, participant);
    }

    @Override
    public String toString() {
        return phase.name().toLowerCase(Locale.ROOT) + "-" + step.name().toLowerCase(Locale.ROOT)
                + (participant >= 0 ? "[" + participant + "]" : "");
    }
}
