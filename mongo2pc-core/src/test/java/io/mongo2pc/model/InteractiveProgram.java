package io.mongo2pc.model;

import java.util.ArrayList;
import java.util.List;

/**
 * The bodies the interactive processes of {@link InteractiveModel} run: which documents they read,
 * in order, and what they write from the values read. Also the serializability check of a
 * finished history: some order of the committed transactions, each run alone from the initial
 * values, must give every interactive one the values it read and end in the final values.
 */
enum InteractiveProgram {
    /** Read A, write A + 1 (a counter). */
    COUNTER_A(new int[] {0}),
    /** Read A and B; if both are on (1), take A off (0): one doctor of two. */
    DOCTOR_A(new int[] {0, 1}),
    /** The other doctor: takes B off if both are on. */
    DOCTOR_B(new int[] {0, 1}),
    /** Read A and B; if A >= 1, move 1 from A to B (no guard: the check is the body's). */
    TRANSFER_AB(new int[] {0, 1}),
    /** Read A and B, write nothing (a read-only body). */
    READER(new int[] {0, 1});

    /** The documents read, in the body's order. */
    final int[] reads;

    InteractiveProgram(int[] reads) {
        this.reads = reads;
    }

    /** The value written to each document (-1: not written) by a body that read {@code read} (-1: not read). */
    int[] writes(int[] read) {
        int[] w = {-1, -1};
        switch (this) {
            case COUNTER_A -> w[0] = read[0] + 1;
            case DOCTOR_A -> w[0] = read[0] + read[1] == 2 ? 0 : -1;
            case DOCTOR_B -> w[1] = read[0] + read[1] == 2 ? 0 : -1;
            case TRANSFER_AB -> {
                if (read[0] >= 1) {
                    w[0] = read[0] - 1;
                    w[1] = read[1] + 1;
                }
            }
            case READER -> { }
        }
        return w;
    }

    /** True if the body may write (only the reader never does). */
    boolean writes() {
        return this != READER;
    }

    /** The ghost entry of a committed attempt of this program that read {@code read}. */
    String entry(int[] read) {
        return name() + ":" + read[0] + "," + read[1];
    }

    /** The ghost entry of the fixed-operation transfer F = B -> A of 1. */
    static final String FIXED = "F";

    /**
     * Null if some order of {@code history} run one by one from {@code initial} gives each entry the
     * values it read, keeps F's guard, and ends in {@code last}; else why not.
     */
    static String serializable(List<String> history, int[] initial, int[] last) {
        List<String> order = new ArrayList<>();
        if (permute(new ArrayList<>(history), order, initial.clone(), last)) {
            return null;
        }
        return "no serial order of " + history + " from " + initial[0] + "," + initial[1] + " reads what each read and ends in "
                + last[0] + "," + last[1];
    }

    private static boolean permute(List<String> left, List<String> order, int[] values, int[] last) {
        if (left.isEmpty()) {
            return values[0] == last[0] && values[1] == last[1];
        }
        for (int i = 0; i < left.size(); i++) {
            String entry = left.get(i);
            int[] next = run(entry, values);
            if (next == null) {
                continue;
            }
            List<String> rest = new ArrayList<>(left);
            rest.remove(i);
            order.add(entry);
            if (permute(rest, order, next, last)) {
                return true;
            }
            order.remove(order.size() - 1);
        }
        return false;
    }

    /** The values after {@code entry} runs alone on {@code values}, or null if it could not have (it read other values, or F's guard fails). */
    private static int[] run(String entry, int[] values) {
        int[] next = values.clone();
        if (entry.equals(FIXED)) {
            if (values[1] < 1) {
                return null;
            }
            next[1]--;
            next[0]++;
            return next;
        }
        String[] parts = entry.split("[:,]");
        InteractiveProgram program = valueOf(parts[0]);
        int[] read = {Integer.parseInt(parts[1]), Integer.parseInt(parts[2])};
        for (int d = 0; d < 2; d++) {
            if (read[d] >= 0 && read[d] != values[d]) {
                return null;
            }
        }
        int[] w = program.writes(read);
        for (int d = 0; d < 2; d++) {
            if (w[d] >= 0) {
                next[d] = w[d];
            }
        }
        return next;
    }
}
