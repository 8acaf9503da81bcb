package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link TransactionManager#list}: filters, newest first, and pages that return every transaction once. */
class TransactionListTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private TransactionManager manager(String application) {
        return TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(mongo.database())
                .application(application).build();
    }

    private MongoCollection<Document> transactions() {
        return mongo.client().getDatabase(mongo.database()).getCollection("transactions");
    }

    private List<Operation> credit(String account) {
        return List.of(Operation.increment(DocumentRef.of(mongo.database(), "accounts", account), "balance", 1L, null));
    }

    private void accounts(String... ids) {
        for (String id : ids) {
            mongo.client().getDatabase(mongo.database()).getCollection("accounts")
                    .insertOne(new Document("_id", id).append("balance", 0L).append("pendingTransactions", List.of()));
        }
    }

    private static List<Object> ids(TransactionPage page) {
        return page.transactions().stream().map(TransactionView::id).toList();
    }

    @Test
    void list_newestFirst_withEveryStoredField() throws InterruptedException {
        accounts("A", "B", "C");
        TransactionManager tm = manager("shop");
        List<Object> run = new ArrayList<>();
        for (String account : List.of("A", "B", "C")) {
            run.add(tm.run(credit(account)).id());
            Thread.sleep(2); // distinct stamps: the order is the order they ran
        }

        TransactionPage page = tm.list(TransactionQuery.all());

        assertThat(ids(page)).containsExactly(run.get(2), run.get(1), run.get(0));
        assertThat(page.more()).isFalse();
        assertThat(page.next()).isNull();
        TransactionView newest = page.transactions().get(0);
        assertThat(newest.state()).isEqualTo(TransactionState.DONE);
        assertThat(newest.application()).isEqualTo("shop");
        assertThat(newest.owner()).isEqualTo(tm.settings().owner());
        assertThat(newest.epoch()).isEqualTo(1);
        assertThat(newest.operations()).hasSize(1);
        assertThat(page.age(newest)).isNotNull().isGreaterThanOrEqualTo(Duration.ZERO);
        mongo.invariants().expectTotal(mongo.database(), 3);
    }

    @Test
    void list_filtersByRepeatedStateOwnerApplicationAndAge() {
        accounts("A");
        TransactionManager shop = manager("shop");
        TransactionManager bank = manager("bank");
        Object done = shop.run(credit("A")).id();
        Object other = bank.run(credit("A")).id();
        Object queued = shop.submit(credit("A"));
        Object canceled = shop.submit(credit("A"));
        shop.cancel(canceled, "no longer wanted");
        transactions().insertOne(new Document("_id", "old").append("state", "done").append("lastModified", new Date(0)));

        assertThat(ids(shop.list(TransactionQuery.builder().state(TransactionState.INITIAL).state(TransactionState.CANCELED).build())))
                .containsExactlyInAnyOrder(queued, canceled);
        assertThat(ids(shop.list(TransactionQuery.builder().owner(bank.settings().owner()).build()))).containsExactly(other);
        assertThat(ids(shop.list(TransactionQuery.builder().application("shop").state(TransactionState.DONE).build())))
                .containsExactly(done);
        assertThat(ids(shop.list(TransactionQuery.builder().olderThan(Duration.ofHours(1)).build()))).containsExactly("old");
        assertThat(ids(shop.list(TransactionQuery.builder().olderThan(Duration.ZERO).build()))).hasSize(5);
        assertThat(shop.list(TransactionQuery.builder().owner("nobody").build()).transactions()).isEmpty();

        shop.cancel(queued, "clean up");
        mongo.invariants().expectTotal(mongo.database(), 2);
    }

    @Test
    void list_pages_returnEveryTransactionOnce_evenWhenManyShareOneMillisecond_andUnstampedOnesComeLast() {
        Date sameMillisecond = new Date();
        Set<Object> stored = new HashSet<>();
        for (int i = 0; i < 12; i++) {
            Object id = i % 3 == 0 ? new ObjectId() : i % 3 == 1 ? (Object) ("s" + i) : (Object) (long) i;
            transactions().insertOne(new Document("_id", id).append("state", "done").append("lastModified", sameMillisecond));
            stored.add(id);
        }
        for (int i = 0; i < 7; i++) {
            transactions().insertOne(new Document("_id", "u" + i).append("state", "canceled"));
            stored.add("u" + i);
        }
        transactions().insertOne(new Document("_id", "newest").append("state", "done")
                .append("lastModified", new Date(sameMillisecond.getTime() + 1000)));
        stored.add("newest");
        TransactionManager tm = manager("pager");
        TransactionQuery query = TransactionQuery.builder().limit(5).build();

        List<Object> seen = new ArrayList<>();
        TransactionPage page = tm.list(query);
        seen.addAll(ids(page));
        int pages = 1;
        while (page.more() && pages < 20) { // a cursor that goes nowhere must fail, not loop
            page = tm.list(query.after(page.next()));
            seen.addAll(ids(page));
            pages++;
        }

        assertThat(seen).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(stored);
        assertThat(pages).isEqualTo(4);
        assertThat(seen.get(0)).isEqualTo("newest");
        assertThat(seen.subList(13, 20)).allMatch(id -> id.toString().startsWith("u"));
    }

    @Test
    void oldestOpenTransaction_isTheOneWaitingLongest() throws InterruptedException {
        accounts("A");
        TransactionManager tm = manager("queue");
        assertThat(tm.oldestOpenTransaction()).isEmpty();
        Object first = tm.submit(credit("A"));
        Thread.sleep(2);
        Object second = tm.submit(credit("A"));
        tm.run(credit("A"));

        assertThat(tm.oldestOpenTransaction()).map(TransactionView::id).contains(first);

        tm.cancel(first, "clean up");
        assertThat(tm.oldestOpenTransaction()).map(TransactionView::id).contains(second);
        tm.cancel(second, "clean up");
        mongo.invariants().expectTotal(mongo.database(), 1);
    }

    @Test
    void badQueries_areRefusedWithTheValueNamed() {
        assertThatThrownBy(() -> TransactionQuery.builder().limit(0)).hasMessage("limit must be between 1 and 1000, got 0");
        assertThatThrownBy(() -> TransactionQuery.builder().limit(1001)).hasMessageContaining("got 1001");
        assertThatThrownBy(() -> TransactionQuery.builder().olderThan(Duration.ofSeconds(-1))).hasMessageContaining("older-than");
        assertThatThrownBy(() -> TransactionQuery.builder().owner(" ")).hasMessage("owner must not be empty");
        assertThatThrownBy(() -> TransactionQuery.builder().after("not a cursor")).hasMessageContaining("is not a page cursor");
        assertThatThrownBy(() -> TransactionQuery.all().after("eyJ4IjoxfQ")).hasMessageContaining("is not a page cursor");
    }

    @Test
    void isStale_onlyOpenOnesPastTheirOwnersLease() {
        Document doc = new Document("_id", 1).append("state", "pending");
        java.time.Instant t = java.time.Instant.parse("2026-01-01T00:00:00Z");
        TransactionView pending = new TransactionView(1, TransactionState.PENDING, "a", "o", 1, Duration.ofSeconds(30), t,
                List.of(), null, null, doc);
        assertThat(pending.isStale(t.plusSeconds(29), Duration.ofSeconds(5))).isFalse();
        assertThat(pending.isStale(t.plusSeconds(30), Duration.ofSeconds(5))).isTrue();
        TransactionView tutorial = new TransactionView(1, TransactionState.PENDING, null, null, 0, null, t, List.of(), null, null, doc);
        assertThat(tutorial.isStale(t.plusSeconds(6), Duration.ofSeconds(5))).isTrue();
        TransactionView queued = new TransactionView(1, TransactionState.INITIAL, null, null, 0, null, t, List.of(), null, null, doc);
        assertThat(queued.isStale(t.plusSeconds(600), Duration.ofSeconds(5))).isFalse();
        TransactionView done = new TransactionView(1, TransactionState.DONE, null, null, 0, null, t, List.of(), null, null, doc);
        assertThat(done.isStale(t.plusSeconds(600), Duration.ofSeconds(5))).isFalse();
    }
}
