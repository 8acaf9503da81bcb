package io.mongo2pc.model;

import io.mongo2pc.model.ProtocolModel.State;
import io.mongo2pc.model.ProtocolModel.Step;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Breadth-first search over every reachable state of a {@link ProtocolModel}, with a visited set.
 * Safety: the first state (or step) that breaks an invariant stops the search; breadth-first, its
 * trace is a shortest one. Liveness: once every state is known, each must be able to reach a
 * finished state (transaction terminal, nothing in flight), computed backwards over the graph.
 */
final class ModelChecker {

    /** What a run found. {@code trace} is empty when nothing is violated. */
    record Outcome(int states, long transitions, int finishedStates, String violation, List<String> trace) {
        boolean ok() {
            return violation == null;
        }

        String report() {
            StringBuilder b = new StringBuilder();
            b.append(ok() ? "no violation" : "VIOLATION: " + violation).append(" (").append(states).append(" states, ")
                    .append(transitions).append(" transitions, ").append(finishedStates).append(" finished states)\n");
            for (String line : trace) {
                b.append("  ").append(line).append('\n');
            }
            return b.toString();
        }
    }

    private final ProtocolModel model;
    private final Map<String, Integer> ids = new HashMap<>();
    private final List<State> states = new ArrayList<>();
    private int[] parent = new int[1024];
    private final List<int[]> successors = new ArrayList<>();
    /** The label of a step that broke a transition invariant (its target may equal a known state). */
    private final Map<Integer, String> badSteps = new HashMap<>();

    ModelChecker(ProtocolModel model) {
        this.model = model;
    }

    /**
     * For bigger searches outside the test suite, e.g. with a larger heap:
     * {@code java -Xmx12g -cp mongo2pc-core/target/test-classes:mongo2pc-core/target/classes
     * io.mongo2pc.model.ModelChecker crashes=2 A=1}.
     * Arguments: {@code crashes=N A=N lease=N skew=N behind=N hands=true bug=NAME} (bug repeatable).
     */
    public static void main(String[] args) {
        int crashes = 1;
        int balanceA = 1;
        int lease = 2;
        int skew = 0;
        int behind = 0;
        boolean hands = false;
        java.util.Set<Bug> bugs = java.util.EnumSet.noneOf(Bug.class);
        for (String arg : args) {
            String[] kv = arg.split("=", 2);
            switch (kv[0]) {
                case "crashes" -> crashes = Integer.parseInt(kv[1]);
                case "A" -> balanceA = Integer.parseInt(kv[1]);
                case "lease" -> lease = Integer.parseInt(kv[1]);
                case "skew" -> skew = Integer.parseInt(kv[1]);
                case "behind" -> behind = Integer.parseInt(kv[1]);
                case "hands" -> hands = Boolean.parseBoolean(kv[1]);
                case "bug" -> bugs.add(Bug.valueOf(kv[1]));
                default -> throw new IllegalArgumentException("unknown argument " + arg);
            }
        }
        long start = System.nanoTime();
        Outcome outcome = new ModelChecker(new ProtocolModel(bugs, crashes, hands, lease, skew, behind, balanceA, 0)).run();
        System.out.println(String.join(" ", args) + ": " + outcome.report()
                + "in " + (System.nanoTime() - start) / 1_000_000 + " ms");
        System.exit(outcome.ok() ? 0 : 1);
    }

    Outcome run() {
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        for (State init : model.initialStates()) {
            int id = add(init, -1);
            String bad = model.violation(init);
            if (bad != null) {
                return failure(bad, id, 0);
            }
            queue.add(id);
        }
        long transitions = 0;
        while (!queue.isEmpty()) {
            int id = queue.poll();
            State s = states.get(id);
            List<Step> steps = model.successors(s);
            int[] succ = new int[steps.size()];
            for (int i = 0; i < steps.size(); i++) {
                Step step = steps.get(i);
                transitions++;
                String badStep = model.transitionViolation(s, step.next());
                if (badStep != null) {
                    int to = add(step.next(), id);
                    badSteps.put(to, step.action());
                    return failure(badStep, to, transitions);
                }
                Integer known = ids.get(step.next().key());
                if (known == null) {
                    known = add(step.next(), id);
                    String bad = model.violation(step.next());
                    if (bad != null) {
                        return failure(bad, known, transitions);
                    }
                    queue.add(known);
                }
                succ[i] = known;
            }
            while (successors.size() <= id) {
                successors.add(null);
            }
            successors.set(id, succ);
        }
        return liveness(transitions);
    }

    /** Every state must be able to reach a finished one: backwards search from the finished states. */
    private Outcome liveness(long transitions) {
        int n = states.size();
        int[] inDegree = new int[n + 1];
        for (int[] succ : successors) {
            for (int t : succ) {
                inDegree[t + 1]++;
            }
        }
        for (int i = 0; i < n; i++) {
            inDegree[i + 1] += inDegree[i];
        }
        int[] preds = new int[inDegree[n]];
        int[] fill = Arrays.copyOf(inDegree, n);
        for (int from = 0; from < n; from++) {
            for (int t : successors.get(from)) {
                preds[fill[t]++] = from;
            }
        }
        boolean[] canFinish = new boolean[n];
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        int finished = 0;
        for (int i = 0; i < n; i++) {
            if (ProtocolModel.finished(states.get(i))) {
                canFinish[i] = true;
                queue.add(i);
                finished++;
            }
        }
        while (!queue.isEmpty()) {
            int t = queue.poll();
            for (int k = inDegree[t]; k < inDegree[t + 1]; k++) {
                int from = preds[k];
                if (!canFinish[from]) {
                    canFinish[from] = true;
                    queue.add(from);
                }
            }
        }
        for (int i = 0; i < n; i++) {
            if (!canFinish[i]) {
                return new Outcome(n, transitions, finished, "no finished state is reachable from the last state", trace(i));
            }
        }
        return new Outcome(n, transitions, finished, null, List.of());
    }

    private int add(State s, int from) {
        int id = states.size();
        states.add(s);
        ids.put(s.key(), id);
        if (id >= parent.length) {
            parent = Arrays.copyOf(parent, parent.length * 2);
        }
        parent[id] = from;
        return id;
    }

    private Outcome failure(String violation, int id, long transitions) {
        return new Outcome(states.size(), transitions, 0, violation, trace(id));
    }

    /** The path from an initial state to {@code id}; the labels are rebuilt by replaying each step. */
    private List<String> trace(int id) {
        List<Integer> path = new ArrayList<>();
        for (int at = id; at >= 0; at = parent[at]) {
            path.add(at);
        }
        java.util.Collections.reverse(path);
        List<String> lines = new ArrayList<>();
        lines.add("initial: " + states.get(path.get(0)));
        for (int i = 1; i < path.size(); i++) {
            State from = states.get(path.get(i - 1));
            State to = states.get(path.get(i));
            String label = badSteps.get(path.get(i));
            if (label == null) {
                String key = to.key();
                label = model.successors(from).stream().filter(st -> st.next().key().equals(key))
                        .map(Step::action).findFirst().orElse("?");
            }
            lines.add(i + ". " + label + "\n      => " + to);
        }
        return lines;
    }
}
