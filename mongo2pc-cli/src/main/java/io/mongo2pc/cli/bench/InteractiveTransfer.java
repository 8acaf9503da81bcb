package io.mongo2pc.cli.bench;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionResult;
import org.bson.Document;

import java.util.List;
import java.util.Optional;

/**
 * {@code bench --mode interactive}: a transfer written as the body of an interactive transaction, as
 * an application would write one without the library's transfer: read both accounts (in one
 * request), refuse if the
 * source is short, write both balances. No guard: serializability keeps the books. Stateless.
 * Public for the request counts of mongo2pc-bench ({@code RequestsPerTransfer}), which run the same body.
 */
public final class InteractiveTransfer {
    private InteractiveTransfer() { }

    /** Moves {@code amount} from {@code from} to {@code to} in the database's {@code accounts}; true if it moved. */
    public static boolean run(TransactionManager tm, String database, String from, String to, long amount) {
        DocumentRef source = DocumentRef.of(database, "accounts", from);
        DocumentRef destination = DocumentRef.of(database, "accounts", to);
        TransactionResult<Boolean> result = tm.transact(ctx -> {
            List<Optional<Document>> accounts = ctx.getAll(List.of(source, destination)); // one round trip
            long a = accounts.get(0).orElseThrow().getLong("balance");
            long b = accounts.get(1).orElseThrow().getLong("balance");
            if (a < amount) {
                return false;
            }
            ctx.update(source, new Document("$set", new Document("balance", a - amount)));
            ctx.update(destination, new Document("$set", new Document("balance", b + amount)));
            return true;
        });
        return result.value() && result.outcome().isCommitted();
    }
}
