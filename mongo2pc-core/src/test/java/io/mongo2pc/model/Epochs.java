package io.mongo2pc.model;

import java.util.Arrays;
import java.util.function.IntUnaryOperator;

/** Canonical epoch numbers, shared by the models so that takeovers do not bound the state space. */
final class Epochs {
    private Epochs() { }

    /**
     * A renaming of the epochs in {@code used[0..n)} that keeps their order, their equality and
     * "is the next epoch" (what a takeover's compare-and-set tests): the smallest becomes 1, and a
     * gap of more than one becomes a gap of two.
     */
    static IntUnaryOperator canonical(int[] used, int n) {
        int[] sorted = Arrays.copyOf(used, n);
        Arrays.sort(sorted);
        int[] renamed = new int[n];
        for (int i = 0; i < n; i++) {
            renamed[i] = i == 0 ? 1 : sorted[i] == sorted[i - 1] ? renamed[i - 1]
                    : renamed[i - 1] + (sorted[i] == sorted[i - 1] + 1 ? 1 : 2);
        }
        return e -> renamed[Arrays.binarySearch(sorted, e)];
    }
}
