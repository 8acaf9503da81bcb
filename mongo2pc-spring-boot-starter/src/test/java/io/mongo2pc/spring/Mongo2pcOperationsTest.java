package io.mongo2pc.spring;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionOptions;
import io.mongo2pc.TransactionResult;
import io.mongo2pc.spring.TransactionalApp.Counter;
import io.mongo2pc.spring.TransactionalApp.Receipt;
import io.mongo2pc.spring.TransactionalApp.Ticket;
import io.mongo2pc.spring.TransactionalApp.Wallet;
import io.mongo2pc.spring.TransactionalApp.WalletRepository;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.dao.OptimisticLockingFailureException;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Mapped objects read and written in mongo2pc transactions, with Spring Data MongoDB's mapping. */
class Mongo2pcOperationsTest extends TransactionalTestBase {
    @Autowired TransactionTemplate template;
    @Autowired WalletRepository repository;

    private Document stored(String collection, Object id) {
        return client.getDatabase(DATABASE).getCollection(collection).find(new Document("_id", id)).first();
    }

    @Test
    void insert_mapsAsSpringData_andARepositoryReadsItBack() {
        Wallet alice = ops.insert(new Wallet(unique("alice"), 100, "Alice"));
        Receipt receipt = new Receipt();
        receipt.wallet = alice.id;
        receipt.amount = 5;

        Receipt inserted = template.execute(status -> ops.insert(receipt));

        assertThat(inserted.id).as("an ObjectId made for it").matches("[0-9a-f]{24}");
        assertThat(stored("receipts", new ObjectId(inserted.id))).as("the id stored as an ObjectId, as Spring Data does")
                .containsEntry("wallet", alice.id).containsEntry("amount", 5L);
        assertThat(stored("wallets", alice.id)).as("@Field, @Version, the type hint")
                .containsEntry("bal", 100L).containsEntry("version", 0L).containsEntry("owner", "Alice").doesNotContainKey("balance")
                .containsKey("_class");
        assertThat(alice.version).isZero();
        assertThat(ops.findById(inserted.id, Receipt.class)).get().extracting(r -> r.amount).isEqualTo(5L);
        assertThat(repository.findById(alice.id)).get().extracting(w -> w.balance, w -> w.owner).containsExactly(100L, "Alice");
    }

    @Test
    void readsInATransaction_seeItsOwnWrites_outsideOnlyTheCommitted() throws InterruptedException {
        Wallet alice = wallet("alice", 100);
        Counter counter = ops.insert(new Counter(unique("counter"), 1));

        long[] seen = template.execute(status -> {
            Wallet w = ops.findById(alice.id, Wallet.class).orElseThrow();
            w.balance = 60;
            ops.save(w);
            ops.remove(counter);
            long inside = ops.findById(alice.id, Wallet.class).orElseThrow().balance;
            long otherThread = CompletableFuture.supplyAsync(() -> ops.findById(alice.id, Wallet.class).orElseThrow().balance).join();
            return new long[] {inside, ops.findById(counter.id(), Counter.class).isPresent() ? 1 : 0, otherThread};
        });

        assertThat(seen[0]).as("its own write").isEqualTo(60);
        assertThat(seen[1]).as("its own remove").isZero();
        assertThat(seen[2]).as("another thread, outside the transaction: the committed balance").isEqualTo(100);
        assertThat(balance(alice)).isEqualTo(60);
        assertThat(ops.findById(counter.id(), Counter.class)).isEmpty();
        // The stored document goes when the transaction is finished, which may be after the commit
        // point the call returned at (finishing in the background).
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (stored("counters", counter.id()) != null && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(stored("counters", counter.id())).isNull();
    }

    @Test
    void version_staleSave_failsAndRollsBackTheTransaction_freshSaveRaisesIt() {
        Wallet alice = wallet("alice", 100);
        Wallet bob = wallet("bob", 0);
        Wallet stale = ops.findById(alice.id, Wallet.class).orElseThrow();
        Wallet fresh = ops.findById(alice.id, Wallet.class).orElseThrow();
        fresh.balance = 90;
        ops.save(fresh); // a transaction of its own: version 0 -> 1

        assertThatThrownBy(() -> template.executeWithoutResult(status -> {
            Wallet b = ops.findById(bob.id, Wallet.class).orElseThrow();
            b.balance = 10;
            ops.save(b);
            stale.balance = 0;
            ops.save(stale);
        })).isInstanceOf(OptimisticLockingFailureException.class).hasMessageContaining("with version 0")
                .hasMessageContaining("changed to version 1");

        assertThat(fresh.version).isEqualTo(1L);
        assertThat(ops.findById(alice.id, Wallet.class)).get().extracting(w -> w.balance, w -> w.version).containsExactly(90L, 1L);
        assertThat(balance(bob)).as("the whole transaction rolled back").isZero();
    }

    @Test
    void immutableEntities_insertAndSaveReturnTheStoredCopy() {
        String id = unique("counter");

        Counter inserted = ops.insert(new Counter(id, 1));
        Counter saved = template.execute(status -> ops.save(new Counter(id, ops.findById(id, Counter.class).orElseThrow().value() + 1)));

        assertThat(inserted).isEqualTo(new Counter(id, 1));
        assertThat(saved).isEqualTo(new Counter(id, 2));
        assertThat(ops.findById(id, Counter.class)).contains(new Counter(id, 2));
    }

    @Test
    void insertOfAnExistingId_isDuplicateKey_andRollsBackTheTransaction() {
        Wallet alice = wallet("alice", 100);
        Wallet bob = wallet("bob", 0);

        assertThatThrownBy(() -> template.executeWithoutResult(status -> {
            Wallet b = ops.findById(bob.id, Wallet.class).orElseThrow();
            b.balance = 10;
            ops.save(b);
            ops.insert(new Wallet(alice.id, 1, "someone else"));
        })).isInstanceOf(DuplicateKeyException.class).hasMessageContaining(alice.id).hasMessageContaining("already exists");

        assertThat(balance(bob)).isZero();
        assertThat(ops.findById(alice.id, Wallet.class)).get().extracting(w -> w.owner).isEqualTo("alice");
    }

    @Test
    void anIdMongo2pcCannotMake_isRefusedInTheUsersWords_nothingWritten() {
        assertThatThrownBy(() -> ops.insert(new Ticket(null, "no number")))
                .isInstanceOf(InvalidDataAccessApiUsageException.class)
                .hasMessageContaining("its id is not set, and mongo2pc makes ids only of type ObjectId, String or BigInteger")
                .hasMessageContaining("is Long");

        assertThat(client.getDatabase(DATABASE).getCollection("tickets").countDocuments()).isZero();
    }

    /**
     * What the starter's README says: a plain repository read does not take part in the protocol.
     * While another process's transaction is between its prepare and its commit, the repository reads
     * the change not yet committed (it may still be undone); mongo2pc's reads see the committed state.
     */
    @Test
    void duringAnotherCommit_aRepositoryReadSeesTheUncommittedChange_opsReadsTheCommittedOne() throws Exception {
        Wallet alice = wallet("alice", 100);
        DocumentRef ref = DocumentRef.of(DATABASE, "wallets", alice.id);
        String holderId = unique("holder");
        assertThat(manager.awaitFinished(Duration.ofSeconds(30))).as("the wallet's insert released").isTrue();
        try (StoppedTransaction<TransactionResult<Object>> other = new StoppedTransaction<>(client, DATABASE, holderId, manager ->
                manager.transact(TransactionOptions.builder().id(holderId).build(), ctx -> {
                    ctx.update(ref, new Document("$inc", new Document("bal", 50)));
                    return null;
                }))) {

            assertThat(repository.findById(alice.id)).get().extracting(w -> w.balance).as("not committed").isEqualTo(150L);
            assertThat(ops.findById(alice.id, Wallet.class)).get().extracting(w -> w.balance).isEqualTo(100L);

            assertThat(other.release().outcome().isCommitted()).isTrue();
        }
        assertThat(ops.findById(alice.id, Wallet.class)).get().extracting(w -> w.balance).isEqualTo(150L);
        assertThat(repository.findById(alice.id)).get().extracting(w -> w.balance).isEqualTo(150L);
    }
}
