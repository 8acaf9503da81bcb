package io.mongo2pc.model;

import io.mongo2pc.TransactionState;
import io.mongo2pc.model.TwoRoundServer.Result;
import io.mongo2pc.model.TwoRoundState.Msg;
import io.mongo2pc.model.TwoRoundState.Proc;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * An exhaustive model of the two-round-trip commit (docs/TWO-ROUND.md; docs/MODEL.md):
 * transfers of 1 in the tutorial's accounts, T1 = B -> A and, with two
 * transactions, T2 = A -> C, so T2's guard on A can meet T1's credit. A transfer holds its debit
 * (guarded decrease applied at the prepare) and marks its credit (applied at the release, after
 * the commit point). Round 1 sends the transaction document's insert and both prepares at once;
 * the commit is one compare-and-set; releases follow; any idle process may meet a marker and
 * resolve it (roll forward, undo, tombstone) or take a stale transaction over.
 *
 * <p>Faults: every interleaving; writes delayed without bound (each write is a message that runs
 * when the server gets it); pauses (time passes while a process takes no step); answers lost (the
 * owner stops waiting: the write becomes an orphan that may still run, and the owner treats it as
 * in doubt); crashes with restart and no memory (its writes on the wire become orphans). Time is
 * kept relative to now and saturated, epochs are renumbered, so neither is bounded.
 */
final class TwoRoundModel implements Model<TwoRoundState> {

    static final String[] ACCOUNT = {"A", "B", "C"};
    static final int OPS = 2;
    /** [tx][op]: the account of each operation: T1 debits B and credits A, T2 debits A and credits C. */
    static final int[][] ACC = {{1, 0}, {0, 2}};
    /** [tx][op]: its change: -1 is a hold guarded by {@code balance >= 1}, +1 an increase without guard. */
    static final int[][] DELTA = {{-1, +1}, {-1, +1}};
    /** With {@link #exclusive}: what T1's update of A sets A's balance to, with its change (round 1b). */
    static final int SET = 2;

    final Set<TwoRoundBug> bugs;
    /**
     * T1's operation on A is an exclusive update ({@code $set: {balance: SET}}) instead of a credit:
     * its prepare takes A with a lock (only where no other transaction's marker is; no other
     * transaction prepares on A while the lock is there), then, before the commit, a second write
     * (round 1b) applies the change and stores the before-image in the lock; the release unlocks,
     * the undo restores the before-image and unlocks (docs/TWO-ROUND.md, "round 1b").
     */
    final boolean exclusive;
    /** With {@link #exclusive}: the server refuses the update's change (a unique index, a validator). */
    final boolean refusesChange;
    /**
     * The commit-insert variant (docs/COMMIT-INSERT.md): round 1 is the prepares alone; the commit
     * point is the document's first write, inserted {@code applied} and stamped, which counts as
     * committed only if it ran before the round's deadline; an owner whose round is in doubt before
     * its deadline inserts the pending document of today's rules instead and goes on by them.
     */
    final boolean commitInsert;
    /**
     * {@code prune} may delete any finished transaction document (done, canceled, tombstone) not
     * modified for a lease, at any time after that.
     */
    final boolean prune;
    /** A reader of readCommitted whose reads are apart ({@link TwoRoundReader}; not with {@link #exclusive}). */
    final boolean reader;
    final int txs;
    final int[] initial;
    final int lease;
    final int skew;
    /** How far each account's server clock runs behind the transactions collection's (0..skew). */
    final int[] behind;
    final int crashes;
    final int delays;
    final int helpers;
    /** Processes renamed canonically once all have started (see TwoRoundSymmetry). */
    final boolean symmetric = !Boolean.getBoolean("model.noSymmetry");
    /** Ages saturate at the lease: no rule tells an older stamp from one exactly a lease old. */
    final int maxAge;
    /** Deadline distances saturate at -maxClockSkew: passed on every server; no rule looks further. */
    final int minLeft;
    private final TwoRoundServer server = new TwoRoundServer(this);
    private final TwoRoundProcesses processes = new TwoRoundProcesses(this, server);
    private final TwoRoundInvariants invariants = new TwoRoundInvariants(this);
    private final TwoRoundCanonical canonical = new TwoRoundCanonical(this);
    private final TwoRoundReader readers = new TwoRoundReader(this);

    TwoRoundModel(Set<TwoRoundBug> bugs, int txs, int[] initial, int lease, int skew, int[] behind, int crashes, int delays, int helpers) {
        this(bugs, false, false, txs, initial, lease, skew, behind, crashes, delays, helpers);
    }

    TwoRoundModel(Set<TwoRoundBug> bugs, boolean exclusive, boolean refusesChange, int txs, int[] initial, int lease, int skew,
                  int[] behind, int crashes, int delays, int helpers) {
        this(bugs, exclusive, refusesChange, false, false, txs, initial, lease, skew, behind, crashes, delays, helpers);
    }

    TwoRoundModel(Set<TwoRoundBug> bugs, boolean exclusive, boolean refusesChange, boolean commitInsert, boolean prune, int txs,
                  int[] initial, int lease, int skew, int[] behind, int crashes, int delays, int helpers) {
        this(bugs, exclusive, refusesChange, commitInsert, prune, false, txs, initial, lease, skew, behind, crashes, delays, helpers);
    }

    TwoRoundModel(Set<TwoRoundBug> bugs, boolean exclusive, boolean refusesChange, boolean commitInsert, boolean prune, boolean reader,
                  int txs, int[] initial, int lease, int skew, int[] behind, int crashes, int delays, int helpers) {
        if (txs < 1 || txs > 2 || initial.length != 3 || behind.length != 3 || skew >= lease
                || Arrays.stream(behind).anyMatch(b -> b < 0 || b > skew) || reader && exclusive) {
            throw new IllegalArgumentException("need 1..2 transactions, 3 balances, 0 <= behind <= skew < lease;"
                    + " a reader without the exclusive update");
        }
        this.reader = reader;
        this.bugs = bugs.isEmpty() ? EnumSet.noneOf(TwoRoundBug.class) : EnumSet.copyOf(bugs);
        this.exclusive = exclusive;
        this.refusesChange = refusesChange;
        this.commitInsert = commitInsert;
        this.prune = prune;
        this.txs = txs;
        this.initial = initial.clone();
        this.lease = lease;
        this.skew = skew;
        this.behind = behind.clone();
        this.crashes = crashes;
        this.delays = delays;
        this.helpers = helpers;
        this.maxAge = lease;
        this.minLeft = -skew;
    }

    boolean has(TwoRoundBug bug) {
        return bugs.contains(bug);
    }

    /** Holds change the balance at the prepare; increases wait for the release (unless the bug of today's rule). */
    boolean appliedAtPrepare(int t, int i) {
        return !takes(t, i) && (DELTA[t][i] < 0 || has(TwoRoundBug.CREDIT_AT_PREPARE));
    }

    /** True for T1's exclusive update of A (in the {@link #exclusive} set-up). */
    boolean takes(int t, int i) {
        return exclusive && t == 0 && i == 1;
    }

    /** The guard of operation {@code i} of {@code t} holds on what is stored (the update has none). */
    boolean guardHolds(TwoRoundState s, int t, int i) {
        return takes(t, i) || DELTA[t][i] > 0 || s.balance[ACC[t][i]] + DELTA[t][i] >= 0;
    }

    /**
     * The prepare of operation {@code i} of {@code t} is refused by another transaction on its
     * account: a take finds another's marker there, any other prepare finds another's lock.
     */
    boolean blocked(TwoRoundState s, int t, int i) {
        int a = ACC[t][i];
        for (int u = 0; u < txs; u++) {
            for (int j = 0; j < OPS; j++) {
                if (u == t || ACC[u][j] != a || !s.marker[u][j]) {
                    continue;
                }
                if (takes(u, j) ? !has(TwoRoundBug.HOLD_IGNORES_LOCK) : takes(t, i) && !has(TwoRoundBug.TAKE_IGNORES_MARKERS)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * True if {@code t}'s document is applied or done but counts as canceled: the commit-insert
     * variant's lateness rule (inserted at or after its deadline), unless a bug ignores it.
     */
    boolean countsLate(TwoRoundState s, int t) {
        return commitInsert && s.late[t] && !has(TwoRoundBug.READER_IGNORES_LATENESS) && !has(TwoRoundBug.NO_LATENESS_RULE);
    }

    /** The owner's deadline from the document's latest stamp: stamp + lease - maxClockSkew. */
    int deadline(TwoRoundState s, int t) {
        return Math.max(minLeft, lease - skew - s.age[t]);
    }

    /** A resolver may tombstone a transaction without a document once {@code now >= until + maxClockSkew} (coordinator's clock). */
    boolean resolvable(TwoRoundState s, int t) {
        if (has(TwoRoundBug.NO_RESOLUTION_WITHOUT_DOCUMENT)) {
            return false;
        }
        if (has(TwoRoundBug.RESOLVER_BEFORE_DEADLINE)) {
            return true;
        }
        return s.until[t] <= (has(TwoRoundBug.RESOLVER_WITHOUT_SKEW_MARGIN) ? 0 : -skew);
    }

    @Override
    public List<TwoRoundState> initialStates() {
        TwoRoundState s = new TwoRoundState();
        s.doc = new TransactionState[txs];
        s.tomb = new boolean[txs];
        s.late = new boolean[txs];
        s.epoch = new int[txs];
        s.age = new int[txs];
        s.owner = new int[txs];
        Arrays.fill(s.owner, TwoRoundState.NO_OWNER);
        s.until = new int[txs];
        s.balance = initial.clone();
        s.marker = new boolean[txs][OPS];
        s.eff = new int[txs][OPS];
        s.committed = new boolean[txs];
        s.canceled = new boolean[txs];
        s.told = new int[txs];
        s.pruned = new boolean[txs];
        s.crashesLeft = crashes;
        s.delaysLeft = delays;
        s.procs = new Proc[txs + helpers];
        for (int p = 0; p < s.procs.length; p++) {
            s.procs[p] = p < txs ? Proc.starting(p) : Proc.IDLE;
        }
        return List.of(normalize(s));
    }

    @Override
    public List<Step<TwoRoundState>> successors(TwoRoundState s) {
        List<Step<TwoRoundState>> out = new ArrayList<>();
        for (int p = 0; p < s.procs.length; p++) {
            processes.steps(s, p, out);
            Proc c = s.procs[p];
            if (s.crashesLeft > 0 && (c.owner() || c.hand() != null)) {
                int crashed = p;
                TwoRoundState n = s.copy();
                n.crashesLeft--;
                if (c.hand() != null) {
                    n.wire.add(c.hand().orphan());
                }
                TwoRoundProcesses.stop(n, crashed);
                for (int t = 0; t < txs; t++) {
                    if (n.owner[t] == crashed) {
                        n.owner[t] = TwoRoundState.CRASHED; // the restarted process is a new incarnation
                    }
                }
                out.add(new Step<>(() -> "P" + crashed + " crashes and restarts", normalize(n)));
            }
        }
        for (int k = 0; k < s.wire.size(); k++) {
            if (k > 0 && s.wire.get(k).equals(s.wire.get(k - 1))) {
                continue;
            }
            TwoRoundState n = s.copy();
            Msg w = n.wire.remove(k);
            Result r = server.execute(n, w);
            if (w.proc() >= 0) {
                // The answer is lost: the owner times out and treats the write as in doubt (waiting
                // in between is the same as a pause).
                TwoRoundState lost = n.copy();
                processes.lost(lost, w.proc(), w);
                out.add(new Step<>(() -> "server runs " + w + " -> " + r + ", the answer is lost (in doubt)", normalize(lost)));
                processes.reply(n, w.proc(), w, r);
            }
            out.add(new Step<>(() -> "server runs " + w + " -> " + r, normalize(n)));
            if ((w.kind() == TwoRoundState.Kind.INSERT || w.kind() == TwoRoundState.Kind.COMMIT_INSERT || prune) && w.proc() < 0) {
                // Lost for good (a crash before it left, a network that dropped it). Any other orphan
                // that never arrives is one that arrives once it can change nothing (see dead());
                // with prune, a document can go, so an orphan may stay able to change something.
                TwoRoundState gone = s.copy();
                gone.wire.remove(k);
                out.add(new Step<>(() -> w + " is lost", normalize(gone)));
            }
        }
        for (int tx = 0; tx < txs && prune; tx++) {
            int t = tx;
            boolean old = s.age[t] >= lease || has(TwoRoundBug.PRUNE_YOUNG);
            if (s.doc[t] != null && (s.doc[t].isTerminal() && old || has(TwoRoundBug.PRUNE_UNFINISHED))) {
                TwoRoundState n = s.copy();
                n.doc[t] = null;
                n.tomb[t] = false;
                n.late[t] = false;
                n.epoch[t] = 0;
                n.age[t] = 0;
                n.owner[t] = TwoRoundState.NO_OWNER;
                n.pruned[t] = true;
                out.add(new Step<>(() -> "prune deletes T" + (t + 1) + "'s document (" + s.doc[t].stored() + ")", normalize(n)));
            }
        }
        if (reader) {
            readers.steps(s, out);
        }
        out.add(new Step<>(() -> "tick", tick(s)));
        return out;
    }

    private TwoRoundState tick(TwoRoundState s) {
        TwoRoundState n = s.copy();
        for (int t = 0; t < txs; t++) {
            n.age[t] = Math.min(maxAge, n.age[t] + 1);
            n.until[t] = Math.max(minLeft, n.until[t] - 1);
        }
        for (int p = 0; p < n.procs.length; p++) {
            if (n.procs[p].owner()) {
                n.procs[p] = n.procs[p].withLeft(Math.max(minLeft, n.procs[p].left() - 1));
            }
        }
        n.wire.replaceAll(w -> w.fenced() ? w.withLeft(Math.max(minLeft, w.left() - 1)) : w);
        return normalize(n);
    }

    /**
     * Canonical form of a successor (see {@link TwoRoundCanonical#normalize}); a read in progress
     * notes the committed mask of this moment (transactions are never renamed, so it needs no renaming).
     */
    TwoRoundState normalize(TwoRoundState s) {
        if (s.read != null) {
            s.read = s.read.seen(TwoRoundReader.committedMask(s));
        }
        return canonical.normalize(s);
    }

    @Override
    public String key(TwoRoundState s) {
        return s.key();
    }

    @Override
    public String violation(TwoRoundState s) {
        return invariants.violation(s);
    }

    @Override
    public String transitionViolation(TwoRoundState from, TwoRoundState to) {
        String read = reader ? readers.violation(from, to) : null;
        return read != null ? read : invariants.transitionViolation(from, to);
    }

    /** Nothing in flight, no marker left, and every transaction terminal or without a document. */
    @Override
    public boolean finished(TwoRoundState s) {
        if (!s.quiescent()) {
            return false;
        }
        for (int t = 0; t < txs; t++) {
            if (s.anyMarker(t) || s.doc[t] != null && !s.doc[t].isTerminal()) {
                return false;
            }
        }
        return true;
    }

    /** Situations a correct run must reach (see {@link TwoRoundSituations}). */
    Map<String, Predicate<TwoRoundState>> situations() {
        return TwoRoundSituations.of(this);
    }

    /**
     * Bigger searches outside the test suite, e.g. {@code java -Xmx12g -cp
     * mongo2pc-core/target/test-classes:mongo2pc-core/target/classes io.mongo2pc.model.TwoRoundModel
     * txs=2 crashes=1 helpers=1}. Arguments: {@code txs=1|2 balances=A,B,C lease=N skew=N
     * behind=A,B,C crashes=N delays=N helpers=N exclusive=true|false refusesChange=true|false
     * commitInsert=true|false prune=true|false reader=true|false bug=NAME} (bug repeatable).
     */
    public static void main(String[] args) {
        int txs = 2;
        int[] balances = {0, 1, 0};
        int lease = 2;
        int skew = 0;
        int[] behind = {0, 0, 0};
        int crashes = 1;
        int delays = 1;
        int helpers = 1;
        boolean exclusive = false;
        boolean refusesChange = false;
        boolean commitInsert = false;
        boolean prune = false;
        boolean reader = false;
        Set<TwoRoundBug> bugs = EnumSet.noneOf(TwoRoundBug.class);
        for (String arg : args) {
            String[] kv = arg.split("=", 2);
            switch (kv[0]) {
                case "txs" -> txs = Integer.parseInt(kv[1]);
                case "balances" -> balances = Arrays.stream(kv[1].split(",")).mapToInt(Integer::parseInt).toArray();
                case "lease" -> lease = Integer.parseInt(kv[1]);
                case "skew" -> skew = Integer.parseInt(kv[1]);
                case "behind" -> behind = Arrays.stream(kv[1].split(",")).mapToInt(Integer::parseInt).toArray();
                case "crashes" -> crashes = Integer.parseInt(kv[1]);
                case "delays" -> delays = Integer.parseInt(kv[1]);
                case "helpers" -> helpers = Integer.parseInt(kv[1]);
                case "exclusive" -> exclusive = Boolean.parseBoolean(kv[1]);
                case "refusesChange" -> refusesChange = Boolean.parseBoolean(kv[1]);
                case "commitInsert" -> commitInsert = Boolean.parseBoolean(kv[1]);
                case "prune" -> prune = Boolean.parseBoolean(kv[1]);
                case "reader" -> reader = Boolean.parseBoolean(kv[1]);
                case "bug" -> bugs.add(TwoRoundBug.valueOf(kv[1]));
                default -> throw new IllegalArgumentException("unknown argument " + arg);
            }
        }
        long start = System.nanoTime();
        TwoRoundModel model = new TwoRoundModel(bugs, exclusive, refusesChange, commitInsert, prune, reader, txs, balances, lease, skew, behind,
                crashes, delays, helpers);
        ModelChecker.Outcome outcome = new ModelChecker<>(model, model.situations()).run();
        System.out.println(String.join(" ", args) + ": " + outcome.report() + "in " + (System.nanoTime() - start) / 1_000_000 + " ms");
        System.exit(outcome.ok() ? 0 : 1);
    }
}
