package io.mongo2pc.cli;

import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code bench}: a short smoke of each mode (the contract's keys, a closed economy), never a throughput assertion. */
class BenchCommandTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @TempDir
    Path dir;

    @Test
    void bench_eachMode_printsTheContractKeys_andConservesMoney() throws Exception {
        for (String mode : new String[]{"library", "tutorial", "raw"}) {
            String db = mongo.database() + "_" + mode;
            Path png = dir.resolve(mode + ".png");
            CliRunner.Result r = new CliRunner("--uri", mongo.uri(), "--db", db)
                    .run("bench", "--mode", mode, "--accounts", "20", "--threads", "4", "--transfers", "200", "--json", "--plot", png.toString());

            assertThat(r.exitCode()).as(r.toString()).isZero();
            // the contract's keys, in order, then the ones added since
            assertThat(r.keys()).containsExactly("mode", "threads", "committed", "canceled", "seconds", "tps", "p50Ms", "p99Ms", "anomaly",
                    "rttMs", "p50RoundTrips", "twoRound", "commitInsert", "p999Ms", "clientCpuUsPerTransfer",
                    "clientContextSwitchesPerTransfer", "serverCpuUsPerTransfer", "serverContextSwitchesPerTransfer", "serverInProcess");
            // what the measured phase cost: the embedded server reports its own, so both sides are known
            assertThat(r.json().get("clientCpuUsPerTransfer").asDouble()).isPositive();
            assertThat(r.json().get("serverCpuUsPerTransfer").asDouble()).isPositive();
            assertThat(r.json().get("clientContextSwitchesPerTransfer").asDouble()).isPositive();
            assertThat(r.json().get("p999Ms").asDouble()).isGreaterThanOrEqualTo(r.json().get("p99Ms").asDouble());
            assertThat(r.json().get("mode").asText()).isEqualTo(mode);
            assertThat(r.json().get("committed").asLong() + r.json().get("canceled").asLong()).isEqualTo(200);
            assertThat(r.json().get("anomaly").asDouble()).isZero();
            assertThat(Files.size(png)).isGreaterThan(1000);
            mongo.invariants().expectTotal(db, 20_000L);
        }
    }

    @Test
    void bench_libraryFinishingInBackground_endsWithEveryTransferDone() {
        String db = mongo.database() + "_background";
        CliRunner.Result r = new CliRunner("--uri", mongo.uri(), "--db", db)
                .run("bench", "--mode", "library", "--rules", "1", "--finish", "background", "--accounts", "20", "--threads", "4", "--transfers", "300", "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        long committed = r.json().get("committed").asLong();
        assertThat(committed + r.json().get("canceled").asLong()).isEqualTo(300);
        assertThat(r.json().get("anomaly").asDouble()).isZero();
        assertThat(r.err()).as("the bench waits for the finisher, which only --finish background has").contains("background finisher");
        // The run ends once the finisher is through and stopped: every committed transfer done, no marker left.
        assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().startsWith("mongo2pc-") && t.getName().contains("finisher")
                && t.isAlive());
        assertThat(mongo.client().getDatabase(db).getCollection("transactions").countDocuments(new Document("state", "done")))
                .isEqualTo(committed);
        mongo.invariants().expectTotal(db, 20_000L);
    }

    @Test
    void bench_twoRound_runsTheTransfersByTheTwoRoundCommit_andConservesMoney() {
        String db = mongo.database() + "_two_round";
        CliRunner.Result r = new CliRunner("--uri", mongo.uri(), "--db", db)
                .run("bench", "--two-round", "--finish", "background", "--accounts", "20", "--threads", "4", "--transfers", "200", "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.json().get("twoRound").asBoolean()).isTrue();
        assertThat(r.json().get("committed").asLong() + r.json().get("canceled").asLong()).isEqualTo(200);
        assertThat(r.json().get("anomaly").asDouble()).isZero();
        var transactions = mongo.client().getDatabase(db).getCollection("transactions");
        assertThat(transactions.countDocuments(new Document("protocol", 2))).as("written by the two-round commit")
                .isEqualTo(transactions.countDocuments()).isPositive();
        mongo.invariants().expectTotal(db, 20_000L);

        CliRunner.Result tutorial = new CliRunner("--uri", mongo.uri(), "--db", db + "_t")
                .run("bench", "--two-round", "--mode", "tutorial", "--transfers", "10", "--json");
        assertThat(tutorial.exitCode()).as(tutorial.toString()).isEqualTo(2);
        assertThat(tutorial.json().get("error").asText()).contains("--two-round applies to --mode library only");
    }

    @Test
    void bench_rules_choosesTheTutorialsRulesOrTheTwoRoundCommit_theDefaultBeingTheLibrarys() {
        for (String rules : new String[]{"1", "2", null}) {
            String db = mongo.database() + "_rules_" + rules;
            java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("bench", "--accounts", "10", "--threads", "2",
                    "--transfers", "50", "--json"));
            if (rules != null) {
                args.addAll(java.util.List.of("--rules", rules));
            }
            CliRunner.Result r = new CliRunner("--uri", mongo.uri(), "--db", db).run(args.toArray(String[]::new));

            assertThat(r.exitCode()).as(r.toString()).isZero();
            boolean twoRound = !"1".equals(rules);
            assertThat(r.json().get("twoRound").asBoolean()).as("--rules " + rules).isEqualTo(twoRound);
            var transactions = mongo.client().getDatabase(db).getCollection("transactions");
            assertThat(transactions.countDocuments(new Document("protocol", 2))).as("--rules " + rules)
                    .isEqualTo(twoRound ? transactions.countDocuments() : 0);
            mongo.invariants().expectTotal(db, 10_000L);
        }
        CliRunner.Result three = new CliRunner("--uri", mongo.uri(), "--db", mongo.database() + "_r3")
                .run("bench", "--rules", "3", "--transfers", "10", "--json");
        assertThat(three.exitCode()).as(three.toString()).isEqualTo(2);
        assertThat(three.json().get("error").asText()).contains("--rules must be 1").contains("got 3");
        CliRunner.Result both = new CliRunner("--uri", mongo.uri(), "--db", mongo.database() + "_r4")
                .run("bench", "--rules", "1", "--two-round", "--transfers", "10", "--json");
        assertThat(both.exitCode()).as(both.toString()).isEqualTo(2);
        assertThat(both.json().get("error").asText()).contains("contradict");
    }

    @Test
    void bench_noCommitInsert_runsTheTwoRoundCommitWithThePendingInsert_andIsRefusedWithTheTutorialsRules() {
        String db = mongo.database() + "_no_commit_insert";
        CliRunner.Result r = new CliRunner("--uri", mongo.uri(), "--db", db)
                .run("bench", "--no-commit-insert", "--accounts", "10", "--threads", "2", "--transfers", "50", "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.json().get("twoRound").asBoolean()).isTrue();
        assertThat(r.json().get("commitInsert").asBoolean()).isFalse();
        assertThat(r.json().get("anomaly").asDouble()).isZero();
        mongo.invariants().expectTotal(db, 10_000L);

        CliRunner.Result byDefault = new CliRunner("--uri", mongo.uri(), "--db", db + "_d")
                .run("bench", "--accounts", "10", "--threads", "2", "--transfers", "20", "--json");
        assertThat(byDefault.json().get("commitInsert").asBoolean()).as(byDefault.toString()).isTrue();

        CliRunner.Result rules1 = new CliRunner("--uri", mongo.uri(), "--db", db + "_r1")
                .run("bench", "--no-commit-insert", "--rules", "1", "--transfers", "10", "--json");
        assertThat(rules1.exitCode()).as(rules1.toString()).isEqualTo(2);
        assertThat(rules1.json().get("error").asText()).contains("--no-commit-insert applies to the two-round commit only");
        assertThat(mongo.client().getDatabase(db + "_r1").getCollection("accounts").countDocuments()).isZero();
    }

    @Test
    void bench_refusesADatabaseThatHoldsAccounts_exit2_andTouchesNothing() {
        mongo.client().getDatabase(mongo.database()).getCollection("accounts")
                .insertOne(new Document("_id", "mine").append("balance", 5L).append("pendingTransactions", java.util.List.of()));

        CliRunner.Result r = new CliRunner("--uri", mongo.uri(), "--db", mongo.database()).run("bench", "--transfers", "10", "--json");

        assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
        assertThat(r.json().get("error").asText()).contains("already holds accounts");
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("accounts").countDocuments()).isEqualTo(1);
        mongo.invariants().expectTotal(mongo.database(), 5L);
    }

    @Test
    void bench_plotToAFolderThatDoesNotExist_exit2_beforeRunning() {
        // Regression: the whole run went by, then the plot failed with exit 1.
        CliRunner.Result r = new CliRunner("--uri", mongo.uri(), "--db", mongo.database())
                .run("bench", "--transfers", "10", "--plot", "/nonexistent-folder/x.png", "--json");

        assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
        assertThat(r.json().get("error").asText()).contains("--plot");
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("accounts").countDocuments()).isZero();
    }
}
