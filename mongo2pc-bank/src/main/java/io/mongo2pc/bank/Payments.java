package io.mongo2pc.bank;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Numbers;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerSettings;
import io.mongo2pc.TransactionOutcome;
import org.bson.Document;

import java.util.ArrayList;
import java.util.List;

/**
 * Paying an order, the payment variant of the tutorial (seed 000): in one transaction the order
 * goes from {@code UnPaid} to {@code Paid}, the account is debited by the order's total (never
 * below zero), and a payment record {@code pay-<order>} is inserted. Orders, payments and
 * accounts live in the manager's database. Paying twice, or without the funds, cancels with
 * nothing in effect. Thread-safe.
 */
public final class Payments {
    public static final String ORDERS = "orders";
    public static final String PAYMENTS = "payments";

    private final TransactionManager manager;
    private final String database;
    private final MongoCollection<Document> orders;
    private final MongoCollection<Document> accounts;

    public Payments(TransactionManager manager) {
        this.manager = manager;
        TransactionManagerSettings s = manager.settings();
        this.database = s.database();
        this.orders = s.target(DocumentRef.DEFAULT_TARGET).getDatabase(database).getCollection(ORDERS)
                .withWriteConcern(s.writeConcern()).withReadConcern(s.readConcern());
        this.accounts = s.target(DocumentRef.DEFAULT_TARGET).getDatabase(database)
                .getCollection(Bank.ACCOUNTS).withReadConcern(s.readConcern());
    }

    /** Creates {@code {_id: orderId, state: "UnPaid", total}}. */
    public void createOrder(String orderId, long total) {
        DocumentRef.requirePlainId(orderId, "order");
        Amounts.requirePositive(total, "order total");
        try {
            orders.insertOne(new Document("_id", orderId).append("state", "UnPaid").append("total", total));
        } catch (MongoWriteException e) {
            if (e.getError().getCategory() == ErrorCategory.DUPLICATE_KEY) {
                throw new InvalidTransactionException("order " + orderId + " already exists");
            }
            throw e;
        }
    }

    /**
     * Pays {@code orderId} from {@code accountId}: done (applied, with a manager that finishes in
     * the background), or canceled with the reason and its code: {@code GUARD_FAILED} (already
     * paid, or its total changed meanwhile), {@code INSUFFICIENT_FUNDS}, {@code DOCUMENT_MISSING}
     * (no such order, or no such account).
     */
    public TransactionOutcome pay(String orderId, String accountId) {
        return pay(null, orderId, accountId, null);
    }

    /**
     * Pays {@code orderId} from {@code accountId} and credits {@code merchantAccountId} (when not
     * null) in the same transaction, so money stays within the accounts.
     */
    public TransactionOutcome pay(String orderId, String accountId, String merchantAccountId) {
        return pay(null, orderId, accountId, merchantAccountId);
    }

    /**
     * {@link #pay(String, String, String)} under the caller's transaction id (null makes one; see
     * {@link TransactionManager#run(Object, List)}): paying with the same id again is the same
     * payment, never a second one. The order is read only for its total; whether it is unpaid, and
     * still has that total, the transaction's guard decides.
     */
    public TransactionOutcome pay(Object transactionId, String orderId, String accountId, String merchantAccountId) {
        DocumentRef.requirePlainId(orderId, "order");
        DocumentRef.requirePlainId(accountId, "account");
        if (merchantAccountId != null) {
            DocumentRef.requirePlainId(merchantAccountId, "merchant account");
        }
        DocumentRef order = DocumentRef.of(database, ORDERS, orderId);
        Document stored = orders.find(new Document("_id", orderId)).first();
        if (stored == null) {
            // No total to pay: a transaction of the order's update alone, whose guard can never
            // hold, is refused as any other (DOCUMENT_MISSING; GUARD_FAILED if the order appeared
            // meanwhile), so a missing order ends as a canceled outcome with nothing in effect.
            return manager.run(transactionId, List.of(Operation.update(order, new Document("$set", new Document("state", "Paid")),
                    new Document("state", "UnPaid").append("total", new Document("$in", List.of())))), null, true);
        }
        Object total = stored.get("total");
        Number amount = Amounts.requirePositive(total instanceof Integer i ? Long.valueOf(i) : total, "total of order " + orderId);
        Number change = Amounts.inLeastScale(amount); // 5.00 keeps an account of whole units whole
        if (Amounts.decimalPlaces(amount) > 0) {
            requireScale(amount, accountId);
            if (merchantAccountId != null) {
                requireScale(amount, merchantAccountId);
            }
        }
        List<Operation> ops = new ArrayList<>(List.of(
                Operation.update(order, new Document("$set", new Document("state", "Paid")),
                        new Document("state", "UnPaid").append("total", total)),
                Operation.increment(DocumentRef.of(database, Bank.ACCOUNTS, accountId), "balance", Numbers.negate(change),
                        new Document("balance", new Document("$gte", amount)))
                        .with(Operation.Flag.DEBIT, Operation.Flag.ALLOW_TYPE_CHANGE),
                Operation.insert(DocumentRef.of(database, PAYMENTS, "pay-" + orderId),
                        new Document("order", orderId).append("account", accountId).append("amount", amount))));
        if (merchantAccountId != null) {
            ops.add(Operation.increment(DocumentRef.of(database, Bank.ACCOUNTS, merchantAccountId), "balance", change, null)
                    .with(Operation.Flag.ALLOW_TYPE_CHANGE));
        }
        return manager.run(transactionId, ops, null, true);
    }

    /** Refuses an amount with more decimal places than {@code accountId}'s balance (a missing account cancels later). */
    private void requireScale(Number amount, String accountId) {
        Document account = accounts.find(new Document("_id", accountId)).first();
        if (account != null) {
            Amounts.requireScale(amount, accountId, account.get("balance"));
        }
    }

}
