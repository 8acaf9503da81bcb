package io.mongo2pc.cli;

import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.SimulatedCrash;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionView;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.bank.Payments;
import org.bson.Document;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code demo}: a zero-setup tour of the protocol on the default connection: accounts, one
 * transfer in the tutorial's documents, a queue drained by three concurrent workers, crashes
 * injected between protocol writes, recovery by another process, an insufficient-funds cancel,
 * and a verification of the books. It runs in a database of its own, emptied first, so it never
 * meets a user's data and every run starts from the same books.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"A zero-setup tour: accounts, concurrent transfers by three workers, injected crashes, recovery, "
                + "an insufficient-funds cancel, and a verification summary, in its own database (--db with _demo appended, emptied first).",
                "Exit 0 when the books verify; 1 otherwise."})
final class DemoCommand extends BaseCommand {
    private static final List<String> PEOPLE = List.of("alice", "bob", "carol", "dave", "erin");
    private static final long OPENING_BALANCE = 1_000;
    private static final Duration CRASHED_LEASE = Duration.ofSeconds(1);

    @Option(names = "--transfers", paramLabel = "K", defaultValue = "120",
            description = "transfers queued for the workers (default: ${DEFAULT-VALUE})")
    int transfers;

    @Option(names = "--workers", paramLabel = "W", defaultValue = "3", description = "concurrent workers (default: ${DEFAULT-VALUE})")
    int workers;

    private record Crash(CrashPoint point, String story, String source, String destination, long amount) { }

    @Override
    protected int run() throws InterruptedException {
        if (transfers < 0 || transfers > 10_000) {
            throw CliException.badInput("--transfers must be between 0 and 10000, got " + transfers);
        }
        if (workers < 1 || workers > 16) {
            throw CliException.badInput("--workers must be between 1 and 16, got " + workers);
        }
        long started = System.nanoTime();
        try (Session session = openServing(demoDatabase())) {
            // The demo's own database, emptied first: the user's data is never touched, and every
            // run starts from the same books however often it is run.
            session.connection().client().getDatabase(session.database()).drop();
            Bank bank = session.bank();
            BigDecimal totalBefore = bank.verify(null).total();
            int run = 1; // the database was emptied: every run is the first
            String prefix = "demo" + run + "-";
            String app = globals().application();

            heading("mongo2pc demo #" + run + ": multi-document transactions from single-document writes");
            say("Data: " + session.connection().description() + ", database '" + session.database()
                    + "' (collections 'accounts' and 'transactions', in the tutorial's own schema).");
            say("By default a transaction sends all its prepares at once (a debit is held under its guard, a credit only");
            say("marked), then commits: the commit point is the insert of the transaction document already applied, which");
            say("counts only if the server stamps it before the owner's deadline; credits take effect after it, at the release.");
            say("Under the tutorial's rules (section 4) the commit point is the compare-and-set pending -> applied.");

            // 1. Accounts -------------------------------------------------------------------------
            heading("1. Open " + PEOPLE.size() + " accounts with " + OPENING_BALANCE + " each");
            List<String> ids = new ArrayList<>();
            for (String person : PEOPLE) {
                String id = prefix + person;
                bank.createAccount(id, OPENING_BALANCE);
                ids.add(id);
            }
            BigDecimal demoTotal = BigDecimal.valueOf(OPENING_BALANCE * PEOPLE.size());
            BigDecimal expectedTotal = totalBefore.add(demoTotal);
            printAccounts(bank, ids);

            // 2. One transfer, shown in the tutorial's documents ----------------------------------
            heading("2. One transfer, " + ids.get(0) + " -> " + ids.get(1) + " 100, run to its end by this process");
            TransactionManager teller = session.newManager(app + "-demo" + run + "-teller", globals().lease(), CrashHook.NONE, false);
            Bank tellerBank = new Bank(teller);
            TransactionOutcome first = tellerBank.transfer(ids.get(0), ids.get(1), 100L);
            say("(the default rules: the debit held and the credit marked in one round trip, then the commit insert;");
            say("the credit applied and the markers removed at the release, then done)");
            say("transaction " + printable(first.id()) + " is " + first.state().stored() + "; its document:");
            say("  " + brief(teller.inspect(first.id()).orElseThrow().document()));
            say("accounts after it (no marker left: pendingTransactions is empty again):");
            for (String id : ids.subList(0, 2)) {
                say("  " + bank.accounts().find(new Document("_id", id)).first().toJson());
            }

            // 3. A queue drained by concurrent workers ---------------------------------------------
            heading("3. Queue " + transfers + " random transfers as 'initial'; " + workers
                    + " workers with different application names claim them concurrently");
            Random random = new Random(run);
            List<Object> queued = new ArrayList<>();
            for (int i = 0; i < transfers; i++) {
                int from = random.nextInt(ids.size());
                int to = (from + 1 + random.nextInt(ids.size() - 1)) % ids.size();
                queued.add(bank.submit(ids.get(from), ids.get(to), 1L + random.nextInt(150)));
            }
            say("queued " + queued.size() + " transfers; starting the workers...");
            Map<String, long[]> perWorker = new ConcurrentHashMap<>();
            List<Thread> threads = new ArrayList<>();
            long drainStart = System.nanoTime();
            for (int w = 1; w <= workers; w++) {
                String name = app + "-demo" + run + "-worker-" + w;
                TransactionManager worker = session.newManager(name, globals().lease(), CrashHook.NONE, false);
                long[] counts = new long[2];
                perWorker.put(name, counts);
                Thread t = new Thread(() -> {
                    Optional<TransactionOutcome> outcome;
                    while ((outcome = worker.claimAndRun()).isPresent()) {
                        counts[outcome.get().isDone() ? 0 : 1]++;
                    }
                }, name);
                t.setUncaughtExceptionHandler((th, e) -> err().println("demo: worker " + th.getName() + " failed: "
                        + Words.plain(Connection.rootMessage(e))));
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            double seconds = (System.nanoTime() - drainStart) / 1e9;
            for (Map.Entry<String, long[]> e : new TreeMap<>(perWorker).entrySet()) {
                say(String.format("  %-40s ran %3d transfers: %3d done, %d canceled", e.getKey(),
                        e.getValue()[0] + e.getValue()[1], e.getValue()[0], e.getValue()[1]));
            }
            Map<String, Long> byState = new LinkedHashMap<>();
            for (Object id : queued) {
                teller.inspect(id).ifPresent(tx -> byState.merge(String.valueOf(tx.document().get("state")), 1L, Long::sum));
            }
            say(String.format("the queue drained in %.2fs (%.0f transfers/s): %s", seconds, queued.size() / seconds, byState));
            if (byState.containsKey("canceled")) {
                say("(a canceled transfer found a balance too low for its debit: its guard refused it and nothing of it "
                        + "stays in effect)");
            }
            printAccounts(bank, ids);

            // 4. Crashes between protocol writes ---------------------------------------------------
            heading("4. Crash a process in the middle of transfers (its lease is " + DurationConverter.format(CRASHED_LEASE) + ")");
            List<Crash> crashes = List.of(
                    new Crash(CrashPoint.after(Step.APPLY, 0),
                            "the debit is written (with its marker), the process dies before the credit",
                            ids.get(0), ids.get(2), 50),
                    new Crash(CrashPoint.before(Step.COMMIT, -1),
                            "both balances are changed, the process dies just before the commit point",
                            ids.get(1), ids.get(3), 70),
                    new Crash(CrashPoint.after(Step.RELEASE, 0),
                            "committed (applied); the first marker is removed, the process dies before the rest",
                            ids.get(2), ids.get(4), 30),
                    new Crash(CrashPoint.after(Step.BEGIN_CANCEL, -1),
                            "the guard refuses the debit (insufficient funds); the process dies right after deciding to cancel",
                            ids.get(3), ids.get(0), 1_000_000));
            say("(this process follows the tutorial's rules, twoRoundCommit(false): debit, credit, the commit point pending -> applied, release)");
            AtomicReference<CrashPoint> armed = new AtomicReference<>();
            CrashHook hook = (point, txId) -> {
                CrashPoint target = armed.get();
                if (point.equals(target) && armed.compareAndSet(target, null)) {
                    throw new SimulatedCrash(point, txId);
                }
            };
            TransactionManager crashy = session.newManager(app + "-demo" + run + "-crashy", CRASHED_LEASE, hook, true);
            Bank crashyBank = new Bank(crashy);
            Map<Object, Crash> crashed = new LinkedHashMap<>();
            for (Crash crash : crashes) {
                armed.set(crash.point());
                try {
                    TransactionOutcome outcome = crashyBank.transfer(crash.source(), crash.destination(), crash.amount());
                    say("  (no crash: transfer " + printable(outcome.id()) + " " + outcome.state().stored() + ")");
                } catch (SimulatedCrash e) {
                    crashed.put(e.transactionId(), crash);
                    say("  CRASH at " + crash.point() + ": " + crash.story());
                } finally {
                    armed.set(null);
                }
            }
            say("left half-done:");
            for (Map.Entry<Object, Crash> e : crashed.entrySet()) {
                Document tx = teller.inspect(e.getKey()).orElseThrow().document();
                say(String.format("  transaction %s %s -> %s %d: state %s, owner %s", printable(e.getKey()),
                        tx.get("source"), tx.get("destination"), ((Number) tx.get("value")).longValue(),
                        tx.get("state"), tx.get("owner")));
            }
            say("markers (pendingTransactions) left on accounts:");
            for (Bank.Account a : accounts(bank, ids)) {
                if (!a.pending().isEmpty()) {
                    say("  " + a.id() + ": balance " + a.balance() + ", pendingTransactions "
                            + a.pending().stream().map(DemoCommand::printable).toList());
                }
            }
            Bank.Verification midway = bank.verify(expectedTotal);
            say("verify right now: " + VerifyCommand.report(midway));

            // 5. Recovery by another process ------------------------------------------------------
            heading("5. Recovery by another process (application '" + app + "-demo" + run + "-recovery')");
            say("The crashed owner will never renew its lease. Once its transactions have been silent for "
                    + DurationConverter.format(CRASHED_LEASE) + " by the server's clock,");
            say("any process may take them over (epoch + 1 fences the old owner) and finish them: pending and applied "
                    + "roll forward, canceling finishes its undo.");
            TransactionManager recovery = session.newManager(app + "-demo" + run + "-recovery", CRASHED_LEASE, CrashHook.NONE, false);
            RecoveryReport total = new RecoveryReport(0, 0, 0);
            for (int attempt = 0; attempt < 20 && !allTerminal(teller, crashed.keySet()); attempt++) {
                Thread.sleep(attempt == 0 ? CRASHED_LEASE.toMillis() + 100 : 250);
                total = total.plus(recovery.recover());
            }
            say("recovery: " + total.rolledForward() + " rolled forward, " + total.canceled() + " canceled, "
                    + total.skipped() + " skipped");
            for (Object id : crashed.keySet()) {
                Document tx = teller.inspect(id).orElseThrow().document();
                say(String.format("  transaction %s: %s (epoch %s, finished by %s)%s", printable(id), tx.get("state"),
                        tx.get("epoch"), tx.get("owner"), tx.get("reason") == null ? "" : ", reason: " + tx.get("reason")));
            }
            printAccounts(bank, ids);

            // 6. Insufficient funds ---------------------------------------------------------------
            heading("6. A transfer larger than the balance is canceled, with nothing left in effect");
            TransactionOutcome refused = tellerBank.transfer(ids.get(4), ids.get(0), 1_000_000L);
            say("transfer " + printable(refused.id()) + " of 1000000 from " + ids.get(4) + " to " + ids.get(0) + ": "
                    + refused.state().stored() + " (" + refused.reason() + ")");

            // 7. A payment (the tutorial's payment variant) ------------------------------------------
            heading("7. Pay an order in one transaction: order UnPaid -> Paid, customer debited, shop credited, payment recorded");
            String shop = "demo" + run + "-shop";
            bank.createAccount(shop, 0L);
            Payments payments = new Payments(teller);
            String order = "demo" + run + "-order-1";
            payments.createOrder(order, 120L);
            TransactionOutcome paid = payments.pay(order, ids.get(0), shop);
            say("pay " + order + " (120) from " + ids.get(0) + ": " + paid.state().stored());
            Document orderNow = session.manager().read(DocumentRef.of(session.database(), Payments.ORDERS, order)).orElseThrow();
            say("  order " + order + " is " + orderNow.getString("state") + "; payment record pay-" + order + " "
                    + (session.manager().read(DocumentRef.of(session.database(), Payments.PAYMENTS, "pay-" + order)).isPresent()
                    ? "written" : "MISSING"));
            TransactionOutcome again = payments.pay(order, ids.get(0), shop);
            say("pay " + order + " again: " + again.state().stored() + " (" + again.reason() + ")");
            List<String> withShop = new ArrayList<>(ids);
            withShop.add(shop);

            // 8. Verification ---------------------------------------------------------------------
            heading("8. Verification");
            printAccounts(bank, withShop);
            BigDecimal demoNow = Bank.total(accounts(bank, withShop));
            Bank.Verification v = bank.verify(expectedTotal);
            boolean ok = v.ok() && demoNow.compareTo(demoTotal) == 0;
            say("demo accounts: total " + demoNow.toPlainString() + " (opened with " + demoTotal.toPlainString() + ")");
            say("whole database: " + VerifyCommand.report(v));
            say(String.format("%s in %.1fs. Check it yourself: mongo2pc%s verify --expect-total %s",
                    ok ? "Demo finished: the books balance" : "Demo FAILED verification",
                    (System.nanoTime() - started) / 1e9, globalsForHint(), expectedTotal.toPlainString()));
            if (!ok) {
                err().println("mongo2pc demo: verification failed: " + VerifyCommand.problems(v));
                err().flush();
            }
            return ok ? ExitCodes.OK : ExitCodes.NOT_OK;
        }
    }

    private static boolean allTerminal(TransactionManager manager, Iterable<Object> ids) {
        for (Object id : ids) {
            Optional<TransactionView> tx = manager.inspect(id);
            if (tx.isPresent() && !tx.get().isTerminal()) {
                return false;
            }
        }
        return true;
    }

    private static List<Bank.Account> accounts(Bank bank, List<String> ids) {
        List<Bank.Account> list = new ArrayList<>();
        for (Bank.Account a : bank.list()) {
            if (ids.contains(String.valueOf(a.id()))) {
                list.add(a);
            }
        }
        return list;
    }

    private void printAccounts(Bank bank, List<String> ids) {
        StringBuilder line = new StringBuilder("  balances:");
        List<Bank.Account> accounts = accounts(bank, ids);
        for (Bank.Account a : accounts) {
            line.append(' ').append(a.id()).append('=').append(a.balance());
            if (!a.pending().isEmpty()) {
                line.append("(+").append(a.pending().size()).append(" marker)");
            }
        }
        say(line.append("  total=").append(Bank.total(accounts).toPlainString()).toString());
    }

    private String brief(Document tx) {
        Document shown = new Document();
        for (String key : List.of("_id", "source", "destination", "value", "state", "lastModified", "application", "owner", "epoch")) {
            if (tx.containsKey(key)) {
                shown.append(key, tx.get(key));
            }
        }
        return shown.toJson();
    }

    private String globalsForHint() {
        Main g = globals();
        StringBuilder sb = new StringBuilder();
        if (g.uri() != null) {
            sb.append(" --uri ").append(g.uri());
        }
        sb.append(" --db ").append(demoDatabase());
        return sb.toString();
    }

    /** {@code --db} with {@code _demo} appended: {@code mongo2pc_demo} by default. */
    private String demoDatabase() {
        return globals().database() + "_demo";
    }

    private static Object printable(Object id) {
        return TransactionIds.printable(id);
    }

    private void heading(String title) {
        say("");
        say("== " + title);
    }
}
