package io.mongo2pc.bank;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Numbers;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerSettings;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import org.bson.Document;
import org.bson.types.Decimal128;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Money transfers between accounts, in the tutorial's own documents:
 * <pre>
 * accounts:     { _id: "A", balance: 1000, pendingTransactions: [] }
 * transactions: { _id, source: "A", destination: "B", value: 100, state: "initial", lastModified }
 * </pre>
 * so an application that followed the tutorial by hand can switch to mongo2pc and mongo2pc can
 * finish what it left half-done. Accounts live in the {@code accounts} collection of the
 * manager's database, on its default target. Bad input is refused before anything is written.
 * Thread-safe.
 */
public final class Bank {
    public static final String ACCOUNTS = "accounts";

    /**
     * One account as stored; {@code balance} in the one type of its scale ({@link Numbers#normalized}:
     * {@code Long} for whole units, {@code BigDecimal} for Decimal128), null if it is not a finite number.
     */
    public record Account(Object id, Number balance, List<Object> pending) { }

    /** What {@link #verify} found; {@code ok} when every check holds. */
    public record Verification(boolean ok, BigDecimal total, long accounts, long negative, long markers, long open,
                               long invalid, BigDecimal expectedTotal, List<Leftover> leftovers) {
        public Verification {
            leftovers = List.copyOf(leftovers);
        }
    }

    /**
     * A document of the accounts collection that no committed transaction wrote: it reads as absent
     * as of the last committed transaction, so it is no account and holds no money. It carries the
     * lock of transaction {@code transactionId}'s operation {@code kind} ({@code insert}); {@code late}
     * when a copy of that insert landed after its deadline (it can never count). Recovery removes it.
     */
    public record Leftover(Object account, Object transactionId, String kind, boolean late) {
        /** Field of the lock an insert, update or delete holds on its document (docs/TWO-ROUND.md, docs/PROTOCOL.md). */
        private static final String LOCK = "_m2pc";

        static Leftover of(Document stored) {
            Document lock = stored.get(LOCK) instanceof Document d ? d : new Document();
            boolean late = lock.get("at") instanceof java.util.Date at && lock.get("until") instanceof java.util.Date until
                    && !at.before(until);
            return new Leftover(stored.get("_id"), lock.get("tx"), lock.get("kind") instanceof String kind ? kind : null,
                    "insert".equals(lock.get("kind")) && late);
        }
    }

    private final TransactionManager manager;
    private final MongoCollection<Document> accounts;
    /**
     * Accounts seen to exist, so a transfer between them skips the existence read. Only a hint
     * for refusing bad input early: an account deleted since is still caught by the apply, which
     * then cancels the transfer. Bounded: cleared when full.
     */
    private final Set<Object> known = ConcurrentHashMap.newKeySet();
    private static final int KNOWN_MAX = 100_000;

    /**
     * A bank on {@code manager}, which must have been built with {@link TransferCodec#INSTANCE}
     * (see {@link #configure}) so that any instance can recover transfers.
     */
    public Bank(TransactionManager manager) {
        this.manager = manager;
        TransactionManagerSettings s = manager.settings();
        this.accounts = s.target(DocumentRef.DEFAULT_TARGET).getDatabase(s.database()).getCollection(ACCOUNTS)
                .withWriteConcern(s.writeConcern()).withReadConcern(s.readConcern());
    }

    /** Registers what a manager needs to run and recover transfers. */
    public static TransactionManagerBuilder configure(TransactionManagerBuilder builder) {
        return builder.codec(TransferCodec.INSTANCE);
    }

    public MongoCollection<Document> accounts() {
        return accounts;
    }

    /**
     * Creates {@code {_id: id, balance, pendingTransactions: []}}; refuses a bad id or amount, or an
     * existing id. The account's scale (the decimal places its amounts may have) is the balance's
     * own: 0 for a {@code long}, 2 for the Decimal128 {@code 10.00} ({@link Amounts}).
     */
    public void createAccount(Object id, Number balance) {
        DocumentRef.requirePlainId(id, "account");
        if (balance instanceof Integer i) {
            balance = i.longValue();
        }
        if (!(balance instanceof Long) && !(balance instanceof Decimal128)) {
            throw new InvalidTransactionException("balance of account " + id + " must be an integer or a Decimal128, got " + balance);
        }
        if (Amounts.toBigDecimal(balance).signum() < 0) {
            throw new InvalidTransactionException("balance of account " + id + " must not be negative, got " + balance);
        }
        try {
            accounts.insertOne(new Document("_id", id).append("balance", balance).append("pendingTransactions", new ArrayList<>()));
        } catch (MongoWriteException e) {
            if (e.getError().getCategory() == ErrorCategory.DUPLICATE_KEY) {
                throw new InvalidTransactionException("account " + id + " already exists");
            }
            throw e;
        }
    }

    /**
     * Creates an account of {@code scale} decimal places (0 to 34): {@code createAccount("A", 10L, 2)}
     * stores the balance 10.00 and allows amounts such as 0.25; a balance with more places is refused.
     */
    public void createAccount(Object id, Number balance, int scale) {
        DocumentRef.requirePlainId(id, "account");
        if (!(balance instanceof Integer) && !(balance instanceof Long) && !(balance instanceof Decimal128)) {
            throw new InvalidTransactionException("balance of account " + id + " must be an integer or a Decimal128, got " + balance);
        }
        createAccount(id, Amounts.inScale(balance, scale, "account " + id));
    }

    /**
     * Moves {@code amount} from {@code source} to {@code destination} and returns when the
     * transfer is {@code done}, or {@code canceled} (e.g. insufficient funds) with its reason; with
     * a manager that finishes in the background, {@code applied} (committed) instead of {@code done}.
     */
    public TransactionOutcome transfer(Object source, Object destination, Number amount) {
        return transfer(null, source, destination, amount);
    }

    /**
     * {@link #transfer(Object, Object, Number)} under the caller's transaction id (null makes one):
     * running the same id again is the same transfer, never a second one (see
     * {@link TransactionManager#run(Object, List)}), so a caller that saw an exception may retry
     * with it. A canceled transfer stays canceled under its id: transfer again with a new one.
     */
    public TransactionOutcome transfer(Object transactionId, Object source, Object destination, Number amount) {
        Document fields = checkTransfer(source, destination, amount);
        return manager.run(transactionId, TransferCodec.operations(manager.settings().database(), source, destination,
                fields.get("value")), fields, false);
    }

    /** Queues a transfer as the tutorial's {@code initial} transaction for workers; returns its id. */
    public Object submit(Object source, Object destination, Number amount) {
        return submit(null, source, destination, amount);
    }

    /** {@link #submit(Object, Object, Number)} under the caller's transaction id (null makes one); the same id queues once. */
    public Object submit(Object transactionId, Object source, Object destination, Number amount) {
        Document fields = checkTransfer(source, destination, amount);
        return manager.submit(transactionId, TransferCodec.operations(manager.settings().database(), source, destination,
                fields.get("value")), fields, false);
    }

    private Document checkTransfer(Object source, Object destination, Number amount) {
        DocumentRef.requirePlainId(source, "source account");
        DocumentRef.requirePlainId(destination, "destination account");
        Number value = Amounts.requirePositive(amount, "transfer amount");
        // MongoDB matches an int and a long of the same value as one _id; so must these checks.
        if (sameId(source).equals(sameId(destination))) {
            throw new InvalidTransactionException("source and destination are the same account " + source);
        }
        // A whole amount fits every account's scale; one with a fraction needs both balances, read now.
        boolean fraction = Amounts.decimalPlaces(value) > 0;
        List<Object> unknown = new ArrayList<>(2);
        for (Object id : List.of(source, destination)) {
            if (fraction || !known.contains(sameId(id))) {
                unknown.add(id);
            }
        }
        if (!unknown.isEmpty()) {
            Map<Object, Object> found = new HashMap<>();
            for (Document account : manager.readByIds(DocumentRef.DEFAULT_TARGET, manager.settings().database(), ACCOUNTS,
                    unknown, List.of("balance"))) {
                found.put(sameId(account.get("_id")), account.get("balance"));
            }
            for (Object id : unknown) {
                if (!found.containsKey(sameId(id))) {
                    throw new InvalidTransactionException("account " + id + " does not exist");
                }
                if (fraction) {
                    Amounts.requireScale(value, id, found.get(sameId(id)));
                }
            }
            if (known.size() >= KNOWN_MAX) {
                known.clear();
            }
            known.addAll(found.keySet());
        }
        return new Document("source", source).append("destination", destination).append("value", Amounts.inLeastScale(value));
    }

    private static Object sameId(Object id) {
        return id instanceof Integer i ? Long.valueOf(i) : id;
    }

    /** Every account, in id order. */
    public List<Account> list() {
        List<Account> list = new ArrayList<>();
        for (Document d : accounts.find().projection(Projections.exclude("__none")).sort(new Document("_id", 1))) {
            // written by anyone: a balance that is not a finite number reads as null, markers that are not a list as none
            list.add(new Account(d.get("_id"), finite(d.get("balance")),
                    d.get("pendingTransactions") instanceof List<?> markers ? new ArrayList<Object>(markers) : List.of()));
        }
        return list;
    }

    private static Number finite(Object balance) {
        if (balance instanceof Double d && (d.isNaN() || d.isInfinite())
                || balance instanceof Decimal128 d128 && (d128.isNaN() || d128.isInfinite())) {
            return null;
        }
        return balance instanceof Number n ? (Number) Numbers.normalized(n) : null;
    }

    /**
     * Checks the books as of the last committed transaction ({@link TransactionManager#readCommitted(List)}:
     * every account in one consistent cut): the total (against {@code expectedTotal} if not null),
     * every balance a number and none negative; and that nothing is left to finish: no marker, no
     * open transaction, no leftover. A document that no committed transaction wrote (a
     * {@link Leftover}, e.g. what a late copy of a canceled insert created) is never counted as an
     * account or as money; it is named, and recovery removes it.
     */
    public Verification verify(Number expectedTotal) {
        List<Document> stored = accounts.find().projection(Projections.exclude("__none")).sort(new Document("_id", 1))
                .into(new ArrayList<>());
        List<DocumentRef> refs = new ArrayList<>(stored.size());
        for (Document d : stored) {
            refs.add(new DocumentRef(DocumentRef.DEFAULT_TARGET, manager.settings().database(), ACCOUNTS, d.get("_id")));
        }
        List<Optional<Document>> committed = committed(refs, stored);
        BigDecimal total = BigDecimal.ZERO;
        long count = 0;
        long negative = 0;
        long markers = 0;
        long invalid = 0;
        List<Leftover> leftovers = new ArrayList<>();
        for (int i = 0; i < stored.size(); i++) {
            Document plain = stored.get(i);
            markers += plain.get("pendingTransactions") instanceof List<?> pending ? pending.size() : 0;
            if (committed.get(i).isEmpty()) {
                leftovers.add(Leftover.of(plain));
                continue;
            }
            count++;
            Number balance = finite(committed.get(i).get().get("balance"));
            if (balance == null) {
                invalid++;
            } else {
                BigDecimal value = Amounts.toBigDecimal(balance);
                total = total.add(value);
                if (value.signum() < 0) {
                    negative++;
                }
            }
        }
        long open = 0;
        for (Map.Entry<TransactionState, Long> e : manager.counts().entrySet()) {
            if (!e.getKey().isTerminal()) {
                open += e.getValue();
            }
        }
        BigDecimal expected = expectedTotal == null ? null : Amounts.toBigDecimal(expectedTotal);
        boolean ok = (expected == null || expected.compareTo(total) == 0) && negative == 0 && markers == 0 && open == 0
                && invalid == 0 && leftovers.isEmpty();
        return new Verification(ok, total, count, negative, markers, open, invalid, expected, leftovers);
    }

    /**
     * The accounts of {@code refs} as of the last committed transaction, in one cut; if there is
     * none (a marker names a transaction this manager cannot find, or writers keep the documents
     * changing), one by one, an account whose committed value cannot be known counting as stored
     * ({@code stored}): its markers fail the check anyway.
     */
    private List<Optional<Document>> committed(List<DocumentRef> refs, List<Document> stored) {
        try {
            return manager.readCommitted(refs);
        } catch (TransactionException cut) {
            List<Optional<Document>> views = new ArrayList<>(refs.size());
            for (int i = 0; i < refs.size(); i++) {
                try {
                    views.add(manager.readCommitted(refs.get(i)));
                } catch (TransactionException unknown) {
                    views.add(Optional.of(stored.get(i)));
                }
            }
            return views;
        }
    }

    /** The total of the balances of {@code accounts} that are numbers (exact). */
    public static BigDecimal total(Iterable<Account> accounts) {
        BigDecimal total = BigDecimal.ZERO;
        for (Account account : accounts) {
            if (account.balance() != null) {
                total = total.add(Numbers.exact(account.balance()));
            }
        }
        return total;
    }

    /** A marker on an account: transaction {@code transactionId} is in flight there (or was, and is not released yet). */
    public record Marker(Object account, Object transactionId) { }

    /** Every marker on the accounts ({@link #markers} counts them), by account id, each in its list's order. */
    public List<Marker> listMarkers() {
        List<Marker> list = new ArrayList<>();
        for (Document d : accounts.find(new Document("pendingTransactions.0", new Document("$exists", true)))
                .projection(Projections.include("pendingTransactions")).sort(new Document("_id", 1))) {
            for (Object tx : d.getList("pendingTransactions", Object.class, List.of())) {
                list.add(new Marker(d.get("_id"), tx));
            }
        }
        return list;
    }

    /** The number of markers on all accounts. */
    public long markers() {
        long markers = 0;
        for (Document d : accounts.find(new Document("pendingTransactions.0", new Document("$exists", true)))
                .projection(Projections.include("pendingTransactions"))) {
            markers += d.getList("pendingTransactions", Object.class, List.of()).size();
        }
        return markers;
    }
}
