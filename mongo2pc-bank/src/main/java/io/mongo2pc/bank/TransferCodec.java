package io.mongo2pc.bank;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Numbers;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionCodec;
import org.bson.Document;
import org.bson.types.Decimal128;

import java.util.List;
import java.util.Optional;

/**
 * Reads a transfer written as the tutorial writes it, {@code {source, destination, value}}, as two
 * guarded increments of {@code balance} in the {@code accounts} collection beside the
 * transactions collection: the debit ({@link Operation.Flag#DEBIT}) guarded by {@code balance >= value} (no overdraft), the
 * credit by {@code balance <= Long.MAX_VALUE - value} for integer amounts (no overflow). Works for
 * transactions mongo2pc wrote and for those an application following the tutorial by hand left
 * half-done. Both may change a balance's number type ({@link Operation.Flag#ALLOW_TYPE_CHANGE}): the
 * bank checks an amount against each account's scale itself ({@link Amounts#requireScale}), with the
 * read that check needs. Stateless and thread-safe.
 */
public final class TransferCodec implements TransactionCodec {
    public static final TransferCodec INSTANCE = new TransferCodec();

    private TransferCodec() { }

    @Override
    public Optional<List<Operation>> operations(Document transaction, String coordinatorDatabase) {
        if (!transaction.containsKey("source") || !transaction.containsKey("destination") || !transaction.containsKey("value")) {
            return Optional.empty();
        }
        return Optional.of(operations(coordinatorDatabase, transaction.get("source"), transaction.get("destination"),
                transaction.get("value")));
    }

    /** A transfer touches its source and its destination account. */
    @Override
    public Optional<Document> touching(Object documentId) {
        return Optional.of(new Document("$or", List.of(new Document("source", documentId), new Document("destination", documentId))));
    }

    static List<Operation> operations(String database, Object source, Object destination, Object value) {
        if (!(value instanceof Number) && !(value instanceof Decimal128)) {
            throw new InvalidTransactionException("transfer value must be a number, got " + value);
        }
        Number amount = (Number) value;
        if (Amounts.toBigDecimal(amount).signum() <= 0) {
            throw new InvalidTransactionException("transfer value must be greater than zero, got " + amount);
        }
        Document debitGuard = new Document("balance", new Document("$gte", amount));
        Document creditGuard = null;
        if (amount instanceof Long || amount instanceof Integer) {
            creditGuard = new Document("balance", new Document("$lte", Long.MAX_VALUE - amount.longValue()));
        }
        return List.of(
                Operation.increment(DocumentRef.of(database, Bank.ACCOUNTS, source), "balance", Numbers.negate(amount), debitGuard)
                        .with(Operation.Flag.DEBIT, Operation.Flag.ALLOW_TYPE_CHANGE),
                Operation.increment(DocumentRef.of(database, Bank.ACCOUNTS, destination), "balance", amount, creditGuard)
                        .with(Operation.Flag.ALLOW_TYPE_CHANGE));
    }

}
