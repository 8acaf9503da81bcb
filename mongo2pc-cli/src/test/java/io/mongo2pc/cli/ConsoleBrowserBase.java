package io.mongo2pc.cli;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.openqa.selenium.WebDriver;

import java.io.IOException;

/**
 * What the console's browser tests share: one headless Chromium per test class (the class is
 * skipped where Chromium is not installed), and the console a test started, stopped after it.
 */
abstract class ConsoleBrowserBase {
    static BrowserDriver page;
    static WebDriver browser;

    ConsoleFixture console;

    @BeforeAll
    static void startBrowser() throws IOException {
        page = BrowserDriver.start();
        browser = page.browser();
    }

    @AfterAll
    static void stopBrowser() throws IOException {
        if (page != null) {
            page.close();
            page = null;
        }
    }

    @AfterEach
    void stopConsole() {
        if (console != null) {
            console.close();
        }
    }
}
