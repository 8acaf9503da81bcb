package io.mongo2pc.model;

import io.mongo2pc.model.Model.Step;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Breadth-first search over every reachable state of a {@link Model}, with a visited set.
 * Safety: the first state (or step) that breaks an invariant stops the search; breadth-first, its
 * trace is a shortest one. Liveness: once every state is known, each must be able to reach a
 * finished state (every transaction terminal, nothing in flight), computed backwards over the graph.
 * Only the keys of visited states are kept (and the frontier's states): a trace is rebuilt by
 * replaying the model from an initial state along the keys of its path.
 */
final class ModelChecker<S> {

    /** What a run found. {@code trace} is empty when nothing is violated. */
    record Outcome(int states, long transitions, int finishedStates, String violation, List<String> trace,
                   Map<String, Integer> reached) {
        boolean ok() {
            return violation == null;
        }

        String report() {
            StringBuilder b = new StringBuilder();
            b.append(ok() ? "no violation" : "VIOLATION: " + violation).append(" (").append(states).append(" states, ")
                    .append(transitions).append(" transitions, ").append(finishedStates).append(" finished states")
                    .append(ok() ? "" : ", trace of " + (trace.size() - 1) + " steps").append(")\n");
            if (!reached.isEmpty()) {
                b.append("  reached (states): ").append(reached).append('\n');
            }
            for (String line : trace) {
                b.append("  ").append(line).append('\n');
            }
            return b.toString();
        }
    }

    private final Model<S> model;
    /** Situations the search must reach (so that the invariants are not checked in vain), counted by state. */
    private final Map<String, java.util.function.Predicate<S>> watched;
    private final Map<String, Integer> reached = new java.util.LinkedHashMap<>();
    private final VisitedKeys visited = new VisitedKeys();
    private final BitSet finished = new BitSet();
    private int[] parent = new int[1024];
    private final List<int[]> successors = new ArrayList<>();

    ModelChecker(Model<S> model) {
        this(model, Map.of());
    }

    ModelChecker(Model<S> model, Map<String, java.util.function.Predicate<S>> watched) {
        this.model = model;
        this.watched = watched;
        watched.keySet().forEach(name -> reached.put(name, 0));
    }

    /**
     * For bigger searches of {@link ProtocolModel} outside the test suite, e.g. with a larger heap:
     * {@code java -Xmx12g -cp mongo2pc-core/target/test-classes:mongo2pc-core/target/classes
     * io.mongo2pc.model.ModelChecker crashes=2 A=1}.
     * Arguments: {@code crashes=N A=N lease=N skew=N behind=N hands=true bug=NAME} (bug repeatable).
     * The two-round-trip commit has its own: {@link TwoRoundModel#main}.
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
        Outcome outcome = new ModelChecker<>(new ProtocolModel(bugs, crashes, hands, lease, skew, behind, balanceA, 0)).run();
        System.out.println(String.join(" ", args) + ": " + outcome.report()
                + "in " + (System.nanoTime() - start) / 1_000_000 + " ms");
        System.exit(outcome.ok() ? 0 : 1);
    }

    Outcome run() {
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        ArrayDeque<S> frontier = new ArrayDeque<>();
        for (S init : model.initialStates()) {
            String initKey = model.key(init);
            int id = add(init, initKey, VisitedKeys.hash(initKey), -1);
            String bad = model.violation(init);
            if (bad != null) {
                return failure(bad, id, 0);
            }
            queue.add(id);
            frontier.add(init);
        }
        long transitions = 0;
        while (!queue.isEmpty()) {
            int id = queue.poll();
            S s = frontier.poll();
            List<Step<S>> steps = model.successors(s);
            int[] succ = new int[steps.size()];
            for (int i = 0; i < steps.size(); i++) {
                Step<S> step = steps.get(i);
                transitions++;
                String badStep = model.transitionViolation(s, step.next());
                if (badStep != null) {
                    return failure(badStep, id, transitions, step.action(), step.next());
                }
                String key = model.key(step.next());
                long hash = VisitedKeys.hash(key);
                int known = visited.find(key, hash);
                if (known < 0) {
                    known = add(step.next(), key, hash, id);
                    String bad = model.violation(step.next());
                    if (bad != null) {
                        return failure(bad, known, transitions);
                    }
                    queue.add(known);
                    frontier.add(step.next());
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
        int n = visited.size();
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
        BitSet canFinish = (BitSet) finished.clone();
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        finished.stream().forEach(queue::add);
        while (!queue.isEmpty()) {
            int t = queue.poll();
            for (int k = inDegree[t]; k < inDegree[t + 1]; k++) {
                int from = preds[k];
                if (!canFinish.get(from)) {
                    canFinish.set(from);
                    queue.add(from);
                }
            }
        }
        int stuck = canFinish.nextClearBit(0);
        if (stuck < n) {
            return new Outcome(n, transitions, finished.cardinality(), "no finished state is reachable from the last state",
                    trace(stuck, null, null), reached);
        }
        return new Outcome(n, transitions, finished.cardinality(), null, List.of(), reached);
    }

    /** Records {@code s} (whose key is {@code key}, with its hash, computed once by the caller) as reached from {@code from}. */
    private int add(S s, String key, long hash, int from) {
        int id = visited.add(key, hash);
        if (model.finished(s)) {
            finished.set(id);
        }
        watched.forEach((name, holds) -> {
            if (holds.test(s)) {
                reached.merge(name, 1, Integer::sum);
            }
        });
        if (id >= parent.length) {
            parent = Arrays.copyOf(parent, parent.length * 2);
        }
        parent[id] = from;
        return id;
    }

    private Outcome failure(String violation, int id, long transitions) {
        return new Outcome(visited.size(), transitions, 0, violation, trace(id, null, null), reached);
    }

    /** A step that broke a transition invariant: the trace to its source, then that step. */
    private Outcome failure(String violation, int from, long transitions, String action, S to) {
        return new Outcome(visited.size(), transitions, 0, violation, trace(from, action, to), reached);
    }

    /**
     * The path from an initial state to {@code id} (then the extra step, if given), replayed
     * through the model: each step is the successor whose key is the next one on the path.
     */
    private List<String> trace(int id, String lastAction, S lastState) {
        List<Integer> path = new ArrayList<>();
        for (int at = id; at >= 0; at = parent[at]) {
            path.add(at);
        }
        Collections.reverse(path);
        S current = model.initialStates().stream().filter(s -> model.key(s).equals(visited.key(path.get(0))))
                .findFirst().orElseThrow();
        List<String> lines = new ArrayList<>();
        lines.add("initial: " + current);
        for (int i = 1; i < path.size(); i++) {
            String key = visited.key(path.get(i));
            Step<S> step = model.successors(current).stream().filter(st -> model.key(st.next()).equals(key))
                    .findFirst().orElseThrow();
            current = step.next();
            lines.add(i + ". " + step.action() + "\n      => " + current);
        }
        if (lastAction != null) {
            lines.add(path.size() + ". " + lastAction + "\n      => " + lastState);
        }
        return lines;
    }
}
