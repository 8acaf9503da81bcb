package io.mongo2pc.cli;

import io.mongo2pc.embedded.EmbeddedServer;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Date;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console page in a real headless Chromium, driven as a person would use it: counts that
 * change while a worker runs, a stale transaction after its owner dies, cancel with confirmation,
 * the id filter, HTML shown as text, and the token. Skipped only where Chromium is not installed.
 */
class ConsoleBrowserTest extends ConsoleBrowserBase {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    CliRunner cli;

    @BeforeEach
    void setUp() {
        cli = new CliRunner("--uri", mongo.uri(), "--db", mongo.database());
        for (String id : List.of("A", "B")) {
            assertThat(cli.run("accounts", "create", id, "1000").exitCode()).isZero();
        }
        mongo.invariants().expectTotal(mongo.database(), 2000);
    }

    private void open(String... consoleArgs) {
        console = new ConsoleFixture(List.of("--uri", mongo.uri(), "--db", mongo.database()), consoleArgs);
        browser.get(console.url());
    }

    private WebDriverWait waiting() {
        return page.waiting();
    }

    private void waitForText(By where, String text) {
        page.waitForText(where, text);
    }

    private WebElement row(String id) {
        return page.row(id);
    }

    private String rowNow(String id) {
        return page.rowNow(id);
    }

    private void waitForRow(String id, String... texts) {
        page.waitForRow(id, texts);
    }

    private void confirm(boolean yes) {
        page.confirm(yes);
    }

    @Test
    void counts_changeWhileAWorkerRuns() {
        for (int i = 0; i < 12; i++) {
            assertThat(cli.run("submit", "A", "B", "1").exitCode()).isZero();
        }
        open();
        waitForText(By.id("count-initial"), "12");
        waitForText(By.id("count-done"), "0");

        CliRunner.Result worker = cli.run("worker", "--threads", "2", "--drain");

        assertThat(worker.exitCode()).as(worker.toString()).isZero();
        waitForText(By.id("count-done"), "12");
        waitForText(By.id("count-initial"), "0");
        waitForText(By.id("oldest-open"), "none");
    }

    @Test
    void staleTransaction_appearsAfterItsOwnerDies_andRecoverNowFinishesIt() {
        String id = ConsoleFixture.stuckTransfer(mongo, Duration.ofMinutes(5));
        open();
        waitForRow(id, "pending");
        assertThat(rowNow(id)).doesNotContain("stale");
        assertThat(browser.findElement(By.cssSelector("#owners tbody")).getText()).contains("dying@");

        mongo.expireLeases(mongo.database()); // the owner was killed: its lease runs out

        waitForRow(id, "stale|", "pending");
        browser.findElement(By.id("action-recover")).click();
        confirm(true);
        waiting().until(ExpectedConditions.textToBePresentInElementLocated(By.id("action-result"), "1 rolled forward"));
        waitForRow(id, "done");
        assertThat(cli.run("verify", "--expect-total", "2000").exitCode()).isZero();
    }

    @Test
    void cancel_asksForConfirmation_thenTheTableShowsItCanceled() {
        String queued = cli.run("submit", "A", "B", "5").out().trim();
        open();
        row(queued).click();
        waitForText(By.id("detail-id"), queued);

        browser.findElement(By.id("detail-cancel")).click();
        confirm(false);
        waitForText(By.id("action-result"), "nothing done");
        assertThat(rowNow(queued)).contains("initial");

        browser.findElement(By.id("detail-cancel")).click();
        confirm(true);
        waiting().until(ExpectedConditions.textToBePresentInElementLocated(By.id("action-result"), "canceled"));
        waitForRow(queued, "canceled", "CANCELED_BY_OPERATOR");
        assertThat(browser.findElement(By.id("detail-cancel")).isDisplayed()).isFalse();
    }

    @Test
    void idFilter_findsOneTransaction() {
        String wanted = null;
        for (int i = 0; i < 6; i++) {
            String id = cli.run("transfer", "A", "B", "1", "--json").json().get("id").asText();
            wanted = i == 2 ? id : wanted;
        }
        open();
        waiting().until(d -> d.findElements(By.cssSelector("#transactions tbody tr[data-id]")).size() == 6);

        browser.findElement(By.id("filter-id")).sendKeys(wanted);
        browser.findElement(By.id("filter-apply")).click();

        String expected = wanted;
        waiting().until(d -> {
            List<WebElement> rows = d.findElements(By.cssSelector("#transactions tbody tr[data-id]"));
            return rows.size() == 1 && expected.equals(rows.get(0).getAttribute("data-id"));
        });

        browser.get("about:blank");
        browser.get(console.url() + "#tx=" + wanted); // a link to one transaction opens it in full
        waitForText(By.id("detail-id"), wanted);
        waiting().until(ExpectedConditions.textToBePresentInElementLocated(By.id("detail-ops"), "increment"));
    }

    @Test
    void databaseDown_showsABanner_andThePageStays() {
        EmbeddedServer server = EmbeddedServer.inMemory().start();
        try {
            console = new ConsoleFixture(ConsoleFixture.givingUpQuickly(server.uri(), "down"));
            browser.get(console.url());
            waitForText(By.id("count-done"), "0");

            server.close();

            waiting().until(ExpectedConditions.textToBePresentInElementLocated(By.id("banner"), "cannot read the database"));
            assertThat(browser.findElement(By.id("count-done")).getText()).isEqualTo("0");
        } finally {
            server.close();
        }
    }

    @Test
    void numbersBeyondADouble_reachThePageExactly() {
        String tiny = "0." + "0".repeat(38) + "1";
        var db = mongo.client().getDatabase(mongo.database());
        db.getCollection("accounts").insertMany(List.of(
                new Document("_id", "BIG").append("balance", 9223372036854775723L).append("pendingTransactions", List.of()),
                new Document("_id", "TINY").append("balance", new Decimal128(new BigDecimal(tiny))).append("pendingTransactions", List.of())));
        db.getCollection("transactions").insertOne(new Document("_id", "big-one").append("state", "canceled")
                .append("source", "BIG").append("destination", "TINY").append("value", 9223372036854775723L)
                .append("lastModified", new Date()));
        open();

        waitForRow("big-one", "BIG → TINY 9223372036854775723");
        row("big-one").click();
        waitForText(By.id("detail-id"), "big-one");
        waiting().until(ExpectedConditions.textToBePresentInElementLocated(By.id("detail-ops"), "\"balance\": 9223372036854775723"));
        waiting().until(ExpectedConditions.textToBePresentInElementLocated(By.id("detail-ops"), "\"balance\": " + tiny));
        assertThat(browser.findElement(By.id("detail-document")).getText()).contains("\"value\": 9223372036854775723");
        db.getCollection("accounts").deleteMany(new Document("_id", new Document("$in", List.of("BIG", "TINY"))));
        mongo.invariants().expectTotal(mongo.database(), 2000);
    }

    @Test
    void htmlInAnIdAndAReason_isShownAsText() {
        String id = "<script>window.pwned = 1</script>";
        String reason = "<img src=x onerror=\"window.pwned = 2\"><b>bold</b>";
        mongo.client().getDatabase(mongo.database()).getCollection("transactions").insertOne(new Document("_id", id)
                .append("state", "canceled").append("reason", reason).append("code", "GUARD_FAILED")
                .append("lastModified", new Date()));
        open();

        waitForRow(id, id, reason);
        row(id).click();
        waitForText(By.id("detail-id"), id);
        assertThat(browser.findElement(By.id("detail-fields")).getText()).contains(reason);
        assertThat(browser.findElements(By.cssSelector("#transactions img, #transactions b, #detail img, #detail b"))).isEmpty();
        assertThat(((JavascriptExecutor) browser).executeScript("return window.pwned === undefined")).isEqualTo(true);
    }

    @Test
    void token_isEnforced_andThePageAsksForIt(@TempDir Path dir) throws IOException {
        Path tokenFile = dir.resolve("token");
        Files.writeString(tokenFile, "browser-token-0123456789");
        open("--token-file", tokenFile.toString());
        ((JavascriptExecutor) browser).executeScript("sessionStorage.clear()");
        browser.navigate().refresh();

        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("token-panel")));
        waiting().until(ExpectedConditions.textToBePresentInElementLocated(By.id("banner"), "needs its token"));
        assertThat(browser.findElement(By.id("count-done")).getText()).isEqualTo("–");

        browser.findElement(By.id("token-input")).sendKeys("browser-token-0123456789");
        browser.findElement(By.cssSelector("#token-form button")).click();
        waitForText(By.id("count-done"), "0");
        waiting().until(ExpectedConditions.invisibilityOfElementLocated(By.id("token-panel")));

        ((JavascriptExecutor) browser).executeScript("sessionStorage.clear()");
        browser.get("about:blank"); // a new load of the page, not a jump within it
        browser.get(console.url() + "#token=browser-token-0123456789");
        waitForText(By.id("count-done"), "0");
        assertThat(browser.getCurrentUrl()).doesNotContain("token=");
    }
}
