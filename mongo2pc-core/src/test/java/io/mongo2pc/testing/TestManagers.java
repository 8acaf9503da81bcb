package io.mongo2pc.testing;

import com.mongodb.client.MongoClient;
import io.mongo2pc.PruneOptions;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;

import java.time.Duration;

/**
 * How tests build transaction managers: one place for what they share. A manager reaches one
 * client as its {@code "default"} target, with the test's database and an application name (the
 * owner names tell the managers of one test apart); a test adds the settings it varies. Tests that
 * stop the protocol on purpose ({@link #crashing}) give up a failing step after
 * {@link #RETRY_TIMEOUT} instead of the library's 30 s. Shared with the other modules' tests
 * (mongo2pc-core's test jar); the bank's wrap these in {@code Bank.configure}.
 */
public final class TestManagers {
    /**
     * Prune options that remove every finished transaction at once, done and canceled, ids and all (no
     * stub): for tests that need a finished transaction's document gone, as prune forced below the
     * lease and forgetting ids leaves it.
     */
    public static final PruneOptions FORGET_NOW = PruneOptions.builder().force(true).includeCanceled(true).forgetIds(true).build();

    /** How long tests that crash or fence an owner on purpose retry one step. */
    public static final Duration RETRY_TIMEOUT = Duration.ofSeconds(5);

    private TestManagers() { }

    /** A builder on {@code client} (target {@code "default"}), {@code database} and {@code application}. */
    public static TransactionManagerBuilder builder(MongoClient client, String database, String application) {
        return TransactionManager.builder().target("default", client).database(database).application(application);
    }

    /** {@link #builder} with {@code hook} at every crash point and the short {@link #RETRY_TIMEOUT}. */
    public static TransactionManagerBuilder crashing(MongoClient client, String database, String application, CrashHook hook) {
        return builder(client, database, application).crashHook(hook).retryTimeout(RETRY_TIMEOUT);
    }

    /**
     * True at the last point before a two-round transaction's document is written: the round-1
     * insert of a pending document, or the commit insert (whichever comes first: the other has the
     * document). An owner stopped there leaves prepares without a document.
     */
    public static boolean beforeTheDocument(CrashPoint point) {
        return point.equals(CrashPoint.before(CrashPoint.Step.INSERT, -1)) || point.equals(CrashPoint.before(CrashPoint.Step.COMMIT, -1));
    }
}
