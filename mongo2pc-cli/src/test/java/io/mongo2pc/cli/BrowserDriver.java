package io.mongo2pc.cli;

import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A headless Debian Chromium driven by Selenium, with the waits the console's page needs: it
 * refreshes every 1.5 s and replaces what it shows, so every wait reads again. Closing it quits
 * the browser and deletes its profile.
 */
final class BrowserDriver implements AutoCloseable {
    static final File CHROMIUM = new File("/usr/bin/chromium");
    static final File CHROMEDRIVER = new File("/usr/bin/chromedriver");
    /** A failure's timeout, never a measure: the page refreshes every 1.5 s on a loaded machine. */
    static final Duration PATIENCE = Duration.ofSeconds(40);

    private final WebDriver browser;
    private final Path profile;

    private BrowserDriver(WebDriver browser, Path profile) {
        this.browser = browser;
        this.profile = profile;
    }

    /** A browser, or the calling test class skipped where Chromium is not installed. */
    static BrowserDriver start() throws IOException {
        assumeTrue(CHROMIUM.canExecute() && CHROMEDRIVER.canExecute(),
                "Chromium is not installed (apt-get install chromium chromium-driver): the console's browser tests are skipped");
        Path profile = Files.createTempDirectory("mongo2pc-chromium");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM);
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                "--window-size=1400,1600", "--user-data-dir=" + profile);
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER).usingAnyFreePort().build();
        return new BrowserDriver(new ChromeDriver(service, options), profile);
    }

    WebDriver browser() {
        return browser;
    }

    /** Waits, reading again whatever a refresh of the page replaced meanwhile. */
    WebDriverWait waiting() {
        WebDriverWait wait = new WebDriverWait(browser, PATIENCE);
        wait.ignoring(StaleElementReferenceException.class);
        return wait;
    }

    void waitForText(By where, String text) {
        waiting().until(ExpectedConditions.textToBe(where, text));
    }

    void waitForTextIn(By where, String text) {
        waiting().until(ExpectedConditions.textToBePresentInElementLocated(where, text));
    }

    WebElement row(String id) {
        return waiting().until(d -> d.findElements(By.cssSelector("#transactions tbody tr")).stream()
                .filter(tr -> id.equals(tr.getAttribute("data-id"))).findFirst().orElse(null));
    }

    /** The row of {@code id} as "class|text", read in one step (a refresh replaces the rows), or null if absent. */
    String rowNow(String id) {
        return (String) script("var rows = document.querySelectorAll('#transactions tbody tr');"
                + "for (var i = 0; i < rows.length; i++) { if (rows[i].dataset.id === arguments[0]) {"
                + " return rows[i].className + '|' + rows[i].innerText; } } return null;", id);
    }

    void waitForRow(String id, String... texts) {
        waiting().until(d -> {
            String row = rowNow(id);
            return row != null && Arrays.stream(texts).allMatch(row::contains);
        });
    }

    void confirm(boolean yes) {
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm")));
        browser.findElement(By.id(yes ? "confirm-yes" : "confirm-no")).click();
    }

    Object script(String js, Object... args) {
        return ((JavascriptExecutor) browser).executeScript(js, args);
    }

    /** The page as a PNG, to look at (the test's output folder keeps it). */
    void screenshot(Path png) throws IOException {
        Files.createDirectories(png.getParent());
        Files.write(png, ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));
    }

    @Override
    public void close() throws IOException {
        browser.quit();
        try (var files = Files.walk(profile)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
