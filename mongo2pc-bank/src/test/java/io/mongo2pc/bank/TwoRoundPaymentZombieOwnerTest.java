package io.mongo2pc.bank;

import com.mongodb.client.MongoDatabase;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import org.bson.Document;
import org.junit.jupiter.api.Tag;

import java.time.Duration;
import java.util.List;

/**
 * {@link TwoRoundZombieOwnerTest} with a payment (the order's update, the debit, the payment's
 * insert): an owner paused between any two of its writes past its lease, while another instance
 * finishes or cancels the payment, changes nothing when it resumes: its takes and its insert fail
 * their deadline, its state changes their epoch, its releases find no lock.
 */
@Tag("slow")
class TwoRoundPaymentZombieOwnerTest extends TwoRoundZombieOwnerTest {
    /** Three prepares and three releases: a lease the loaded machine meets, or the run cancels before the point it pauses at. */
    @Override
    protected Duration ownerLease() {
        return Duration.ofSeconds(1);
    }

    @Override
    protected TransactionOutcome start(TransactionManager owner) {
        return new Payments(owner).pay("o1", "alice");
    }

    @Override
    protected void setUp(TransactionManager setup) {
        new Bank(setup).createAccount("alice", 100L);
        new Payments(setup).createOrder("o1", 30L);
    }

    @Override
    protected List<Object> observed(String db) {
        MongoDatabase d = mongo.client().getDatabase(db);
        return List.of(d.getCollection(Payments.ORDERS).find(new Document("_id", "o1")).first().getString("state"),
                d.getCollection(Bank.ACCOUNTS).find(new Document("_id", "alice")).first().getLong("balance"),
                d.getCollection(Payments.PAYMENTS).countDocuments());
    }

    @Override
    protected List<Object> expected(boolean done) {
        return done ? List.of("Paid", 70L, 1L) : List.of("UnPaid", 100L, 0L);
    }

    @Override
    protected long total(boolean done) {
        return done ? 70L : 100L;
    }

    @Override
    protected List<String> collections() {
        return List.of(Bank.ACCOUNTS, Payments.ORDERS, Payments.PAYMENTS);
    }
}
