package io.mongo2pc.cli;

import io.mongo2pc.TransactionManager;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Rectangle;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console page as an operator uses it in a headless Chromium: the charts under real load and
 * from history a console started later reads back, the list's total and search by document with
 * the detail beside it, the warnings, and who did an action. Each test leaves a screenshot in
 * {@code target/console-screenshots} to look at. Skipped only where Chromium is not installed.
 */
class ConsoleBrowserOperatorTest extends ConsoleBrowserBase {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    static final Path SCREENSHOTS = Path.of("target", "console-screenshots");
    static final int ACCOUNTS = 40;
    static final long OPENING = 1_000_000;

    CliRunner cli;

    @BeforeEach
    void setUp() {
        cli = new CliRunner("--uri", mongo.uri(), "--db", mongo.database());
        for (int i = 0; i < ACCOUNTS; i++) {
            assertThat(cli.run("accounts", "create", "a" + i, String.valueOf(OPENING)).exitCode()).isZero();
        }
        mongo.invariants().expectTotal(mongo.database(), ACCOUNTS * OPENING);
    }

    private void open(String... globals) {
        List<String> args = new ArrayList<>(List.of("--uri", mongo.uri(), "--db", mongo.database()));
        args.addAll(List.of(globals));
        console = new ConsoleFixture(args);
        browser.get(console.url());
    }

    /** Transfers between random accounts from {@code threads} threads for {@code duration}, as an application runs them; how many. */
    private long load(int threads, Duration duration) throws InterruptedException {
        AtomicLong done = new AtomicLong();
        try (TransactionManager tm = Bank.configure(TestManagers.builder(mongo.client(), mongo.database(), "load")).build()) {
            Bank bank = new Bank(tm);
            long end = System.nanoTime() + duration.toNanos();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Thread worker = new Thread(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    while (System.nanoTime() < end) {
                        int from = random.nextInt(ACCOUNTS);
                        int to = (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
                        bank.transfer("a" + from, "a" + to, 1 + random.nextInt(100));
                        done.incrementAndGet();
                    }
                });
                worker.start();
                workers.add(worker);
            }
            for (Thread worker : workers) {
                worker.join();
            }
        }
        return done.get();
    }

    /**
     * True once {@code chart} draws a line (or a dot) of class {@code cls} above zero somewhere (the
     * chart's zero is at y 158 of 180; a point without a value, a latency where nothing was timed,
     * draws nothing).
     */
    private boolean drawn(String chart, String cls) {
        return (Boolean) page.script("var marks = document.querySelectorAll('#' + arguments[0] + ' .' + arguments[1]);"
                + "for (var i = 0; i < marks.length; i++) { var ys = marks[i].tagName === 'circle' ? [Number(marks[i].getAttribute('cy'))]"
                + " : marks[i].getAttribute('points').split(' ').map(function (p) { return Number(p.split(',')[1]); });"
                + " if (Math.min.apply(null, ys) < 157.5) { return true; } } return false;", chart, cls);
    }

    @Test
    void commitLatencyChart_drawsUnderRealLoad() throws Exception {
        open();

        long transfers = load(8, Duration.ofSeconds(8));

        page.waiting().until(d -> drawn("chart-latency", "p50") && drawn("chart-throughput", "committed"));
        page.screenshot(SCREENSHOTS.resolve("under-load.png"));
        System.out.println("console under load: " + transfers + " transfers in 8 s");
        assertThat(cli.run("verify", "--expect-total", String.valueOf(ACCOUNTS * OPENING)).exitCode()).isZero();
    }

    @Test
    void aConsoleStartedAfterTheTransfers_drawsThemFromTheCollection() throws Exception {
        load(4, Duration.ofSeconds(3));

        open();

        page.waiting().until(d -> drawn("chart-latency", "p50") && drawn("chart-throughput", "committed"));
        browser.findElement(By.id("window-day")).click();
        page.waiting().until(d -> drawn("chart-throughput", "committed")
                && "true".equals(d.findElement(By.id("window-day")).getAttribute("aria-pressed")));
        page.waitForTextIn(By.id("history-from"), "transactions collection");
    }

    @Test
    void list_hasATotal_findsTheTransfersOfOneAccount_andShowsTheDetailBesideIt() throws Exception {
        List<String> ofA7 = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String id = cli.run("transfer", i % 2 == 0 ? "a7" : "a1", "a2", "5", "--json").json().get("id").asText();
            if (i % 2 == 0) {
                ofA7.add(id);
            }
        }
        open();
        page.waitForTextIn(By.id("total"), "6 transactions");

        browser.findElement(By.id("filter-doc")).sendKeys("a7");
        browser.findElement(By.id("filter-apply")).click();

        page.waitForTextIn(By.id("total"), "3 transactions");
        page.waiting().until(d -> d.findElements(By.cssSelector("#transactions tbody tr[data-id]")).stream()
                .map(tr -> tr.getAttribute("data-id")).toList().containsAll(ofA7));
        page.row(ofA7.get(0)).click();
        page.waitForText(By.id("detail-id"), ofA7.get(0));
        Rectangle list = browser.findElement(By.cssSelector("section.list")).getRect();
        Rectangle detail = browser.findElement(By.id("detail")).getRect();
        assertThat(detail.getX()).as("the detail is to the right of the list").isGreaterThanOrEqualTo(list.getX() + list.getWidth());
        assertThat(detail.getY()).as("beside it, not below it").isLessThan(list.getY() + list.getHeight() / 2);
        page.screenshot(SCREENSHOTS.resolve("list-and-detail.png"));

        browser.findElement(By.id("filter-from")).sendKeys("2999-01-01T00:00:00Z");
        browser.findElement(By.id("filter-apply")).click();
        page.waitForTextIn(By.id("total"), "0 transactions");
    }

    @Test
    void warnings_showQueuedStaleAndOrphanMarkers_withLinksToTheTransactions() throws Exception {
        String queued = cli.run("submit", "a1", "a2", "5").out().trim();
        String stuck = stuckTransfer();
        mongo.client().getDatabase(mongo.database()).getCollection("accounts")
                .updateOne(new Document("_id", "a3"), new Document("$push", new Document("pendingTransactions", "ghost")));

        open("--lease", "1s");

        page.waitForTextIn(By.id("warning-list"), "1 queued transaction has waited more than 1s");
        page.waitForTextIn(By.id("warning-list"), "1 open transaction's owner stopped");
        page.waitForTextIn(By.id("warning-list"), "a3 carries ghost (no such transaction)");
        page.screenshot(SCREENSHOTS.resolve("warnings.png"));
        browser.findElement(By.cssSelector(".warning-queued a[data-id]")).click();
        page.waitForText(By.id("detail-id"), queued);

        mongo.client().getDatabase(mongo.database()).getCollection("accounts")
                .updateOne(new Document("_id", "a3"), new Document("$pull", new Document("pendingTransactions", "ghost")));
        assertThat(cli.run("cancel", queued).exitCode()).isZero();
        assertThat(cli.run("recover", "--older-than", "0s").exitCode()).isZero();
        page.waiting().until(d -> d.findElement(By.id("warnings")).getAttribute("hidden") != null);
        assertThat(cli.run("inspect", stuck, "--json").json().get("state").asText()).isEqualTo("done");
    }

    @Test
    void cancel_inThePage_recordsWhoDidIt_andTheDetailShowsIt(@TempDir Path dir) throws Exception {
        String queued = cli.run("submit", "a1", "a2", "5").out().trim();
        Path tokens = dir.resolve("tokens");
        Files.writeString(tokens, "alice alice-secret-0123456789\n");
        console = new ConsoleFixture(List.of("--uri", mongo.uri(), "--db", mongo.database()), "--token-file", tokens.toString());
        browser.get("about:blank");
        browser.get(console.url() + "#token=alice-secret-0123456789&tx=" + queued);
        page.waitForText(By.id("detail-id"), queued);

        browser.findElement(By.id("detail-cancel")).click();
        page.confirm(true);

        page.waitForTextIn(By.id("detail-actions"), "cancel by alice at ");
        page.waitForRow(queued, "canceled", "CANCELED_BY_OPERATOR");
        page.screenshot(SCREENSHOTS.resolve("canceled-by-alice.png"));
    }

    @Test
    void prune_inThePage_asksWithTheCountOfWhatItWouldPrune_thenPrunesThatMany() throws Exception {
        assertThat(cli.run("transfer", "a1", "a2", "1").exitCode()).isZero();
        assertThat(cli.run("transfer", "a1", "a2", String.valueOf(OPENING * 10)).exitCode()).as("refused: insufficient funds").isEqualTo(3);
        mongo.client().getDatabase(mongo.database()).getCollection("transactions").updateMany(new Document(),
                new Document("$set", new Document("lastModified", Date.from(Instant.now().minus(Duration.ofHours(1)))))); // an hour passes
        open();

        browser.findElement(By.id("prune-older-than")).clear();
        browser.findElement(By.id("prune-older-than")).sendKeys("30m");
        browser.findElement(By.id("action-prune")).click();
        page.waitForTextIn(By.id("confirm-text"), "Prune 1 done transaction(s) unchanged for 30m?");
        assertThat(browser.findElement(By.id("confirm-text")).getText()).contains("1 canceled one(s) as old are kept");
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("transactions")
                .countDocuments(new Document("pruned", new Document("$exists", true)))).as("nothing pruned before the answer").isZero();
        page.confirm(true);

        page.waitForTextIn(By.id("action-result"), "pruned 1 done transaction(s) older than 30m");
    }

    /** A transfer whose owner (lease 1 s) died after its first prepare: stale a second later; its id. */
    private String stuckTransfer() {
        for (String id : List.of("A", "B")) {
            assertThat(cli.run("accounts", "create", id, "1000").exitCode()).isZero();
        }
        mongo.invariants().expectTotal(mongo.database(), ACCOUNTS * OPENING + 2000);
        return ConsoleFixture.stuckTransfer(mongo, Duration.ofSeconds(1));
    }
}
