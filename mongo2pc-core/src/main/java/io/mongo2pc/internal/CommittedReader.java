package io.mongo2pc.internal;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionState;
import org.bson.Document;
import org.bson.types.Decimal128;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * Reads a document as of the last committed transaction: never data of a transaction that is not
 * committed (before {@code applied}) nor of one that was canceled. A document taken by a
 * transaction is resolved by that transaction's state: committed shows it, otherwise its
 * before-image (update), nothing (insert) or the document (delete); increments of transactions
 * not committed are subtracted again. {@link #readAll} reads several documents as one cut.
 * Thread-safe.
 */
final class CommittedReader {
    private final Targets targets;
    private final TransactionStore store;
    private final Function<Document, List<Operation>> operationsOf;

    CommittedReader(Targets targets, TransactionStore store, Function<Document, List<Operation>> operationsOf) {
        this.targets = targets;
        this.store = store;
        this.operationsOf = operationsOf;
    }

    Optional<Document> read(DocumentRef ref) {
        Document doc = raw(ref);
        while (true) {
            if (doc == null) {
                return Optional.empty();
            }
            Map<Object, Document> transactions = new HashMap<>();
            try {
                return resolve(ref, doc, id -> transactions.computeIfAbsent(id, store::find));
            } catch (UnknownTransactionException e) {
                // It may have finished and been pruned since the document was read (its markers are
                // gone first): read the document again; unchanged, it names one this reader cannot see.
                Document again = raw(ref);
                if (Objects.equals(again, doc)) {
                    throw e;
                }
                doc = again;
            }
        }
    }

    /**
     * Several documents as of one moment: read them, read the transactions they name, read them
     * again; if none changed in between, each held its value while those transactions were read,
     * so resolving them together gives one consistent cut (no fractured read of a transaction
     * that committed meanwhile). Retried while writers move them; the one limit is a document
     * changed and changed back to the same content between the two reads.
     */
    List<Optional<Document>> readAll(List<DocumentRef> refs, int attempts) {
        for (int attempt = 0; attempt < attempts; attempt++) {
            List<Document> first = new ArrayList<>();
            refs.forEach(ref -> first.add(raw(ref)));
            Map<Object, Document> transactions = new HashMap<>();
            for (Document doc : first) {
                for (Object id : referenced(doc)) {
                    transactions.computeIfAbsent(id, store::find);
                }
            }
            List<Document> second = new ArrayList<>();
            refs.forEach(ref -> second.add(raw(ref)));
            if (first.equals(second)) {
                List<Optional<Document>> views = new ArrayList<>();
                for (int i = 0; i < refs.size(); i++) {
                    Document doc = first.get(i);
                    views.add(doc == null ? Optional.empty() : resolve(refs.get(i), doc, transactions::get));
                }
                return views;
            }
            try {
                Thread.sleep(Math.min(50, 1L << attempt));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        throw new TransactionException("could not read " + refs.size() + " documents at one moment in "
                + attempts + " attempts: writers keep changing them", null, null);
    }

    private Document raw(DocumentRef ref) {
        return targets.collection(ref).find(new Document(Fields.ID, ref.id())).projection(Projections.exclude("__none")).first();
    }

    /** The transactions a stored document names: its lock's and its markers'. */
    private static List<Object> referenced(Document doc) {
        List<Object> ids = new ArrayList<>();
        if (doc == null) {
            return ids;
        }
        Document lock = doc.get(Fields.LOCK, Document.class);
        if (lock != null && lock.get("tx") != null) {
            ids.add(lock.get("tx"));
        }
        if (doc.get(Fields.MARKERS) instanceof List<?> markers) {
            ids.addAll(markers);
        }
        return ids;
    }

    private Optional<Document> resolve(DocumentRef ref, Document doc, Function<Object, Document> transaction) {
        Document view = new Document(doc);
        view.remove(Fields.LOCK);
        Document lock = doc.get(Fields.LOCK, Document.class);
        Object lockTx = lock == null ? null : lock.get("tx");
        if (lock != null) {
            if (Participants.isLateInsert(doc)) {
                return Optional.empty();
            }
            boolean committed = isCommitted(known(ref, lockTx, transaction));
            String kind = lock.getString("kind");
            if ("insert".equals(kind) && !committed || "delete".equals(kind) && committed) {
                return Optional.empty();
            }
            Document undo = lock.get("undo", Document.class);
            if ("update".equals(kind) && !committed && undo != null) {
                view = new Document(Fields.ID, ref.id());
                view.putAll(undo);
            }
        }
        List<Object> markers = view.containsKey(Fields.MARKERS) ? view.getList(Fields.MARKERS, Object.class) : null;
        if (markers != null) {
            for (Object marker : markers) {
                if (Participants.sameId(marker, lockTx)) {
                    continue;
                }
                Document tx = known(ref, marker, transaction);
                if (!isCommitted(tx)) {
                    subtractIncrement(view, ref, operationsOf.apply(tx));
                }
            }
            view.put(Fields.MARKERS, new ArrayList<>());
        }
        return Optional.of(view);
    }

    /**
     * The transaction {@code id} that {@code ref} names. One this coordinator does not know (run by
     * a coordinator with another transactions collection, or removed while its marker stayed) has
     * a state and operations this reader cannot see: refuse rather than guess.
     */
    private Document known(DocumentRef ref, Object id, Function<Object, Document> transaction) {
        Document tx = transaction.apply(id);
        if (tx == null) {
            throw new UnknownTransactionException("cannot read " + ref + " as committed: it names transaction " + id
                    + ", which is not in " + store.collection().getNamespace().getFullName()
                    + " (all transactions on a document read as committed must share one transactions collection)",
                    id, null);
        }
        return tx;
    }

    /** A document names a transaction that this reader's transactions collection does not hold. */
    private static final class UnknownTransactionException extends TransactionException {
        UnknownTransactionException(String message, Object transactionId, TransactionState lastKnownState) {
            super(message, transactionId, lastKnownState);
        }
    }

    private static boolean isCommitted(Document transaction) {
        if (transaction == null) {
            return false;
        }
        Object state = transaction.get(Fields.STATE);
        return TransactionState.parse(state instanceof String s ? s : null)
                .map(s -> s == TransactionState.APPLIED || s == TransactionState.DONE).orElse(false);
    }

    private static void subtractIncrement(Document view, DocumentRef ref, List<Operation> ops) {
        for (Operation op : ops) {
            DocumentRef other = op.document();
            if (op instanceof Operation.Increment inc && other.target().equals(ref.target())
                    && other.database().equals(ref.database()) && other.collection().equals(ref.collection())
                    && Participants.sameId(other.id(), ref.id())) {
                inc.increments().forEach((field, amount) -> {
                    Object current = view.get(field);
                    if (current instanceof Number n) {
                        view.put(field, minus(n, (Number) amount));
                    }
                });
            }
        }
    }

    /** {@code a - b}, in the type of {@code a} (Decimal128 if either is). */
    static Number minus(Number a, Number b) {
        if (a instanceof Decimal128 || b instanceof Decimal128) {
            return new Decimal128(toBig(a).subtract(toBig(b)));
        }
        if (a instanceof Double || b instanceof Double) {
            return a.doubleValue() - b.doubleValue();
        }
        long result = a.longValue() - b.longValue();
        return a instanceof Integer && result == (int) result ? (Number) (int) result : (Number) result;
    }

    private static BigDecimal toBig(Number n) {
        if (n instanceof Decimal128 d) {
            return new BigDecimal(d.toString()); // bigDecimalValue() throws on a negative zero
        }
        if (n instanceof Double d) {
            return BigDecimal.valueOf(d);
        }
        return BigDecimal.valueOf(n.longValue());
    }
}
