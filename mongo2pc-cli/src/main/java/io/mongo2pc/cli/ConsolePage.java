package io.mongo2pc.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * The console's one page: {@code console/index.html} with {@code console.css} and its scripts
 * ({@code chart.js}, {@code numbers.js}, {@code ui.js}, {@code list.js}, {@code detail.js},
 * {@code console.js}) put inline, so that one request (which a token may guard) brings it all.
 * The Content-Security-Policy allows exactly that script and that style (by their hashes) and
 * requests to this server only: nothing from elsewhere runs, even if a value shown were HTML.
 */
final class ConsolePage {
    private final byte[] html;
    private final String policy;

    ConsolePage() {
        String css = resource("console.css");
        String js = resource("chart.js") + resource("numbers.js") + resource("ui.js") + resource("list.js")
                + resource("detail.js") + resource("console.js");
        this.html = resource("index.html").replace("/*CONSOLE_CSS*/", css).replace("/*CONSOLE_JS*/", js)
                .getBytes(StandardCharsets.UTF_8);
        this.policy = "default-src 'none'; script-src '" + sha256(js) + "'; style-src '" + sha256(css) + "'; "
                + "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    }

    byte[] html() {
        return html;
    }

    String contentSecurityPolicy() {
        return policy;
    }

    private static String resource(String name) {
        try (InputStream in = ConsolePage.class.getResourceAsStream("console/" + name)) {
            if (in == null) {
                throw new IllegalStateException("the console's " + name + " is missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String sha256(String text) {
        try {
            return "sha256-" + Base64.getEncoder().encodeToString(
                    MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
