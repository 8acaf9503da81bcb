package io.mongo2pc.embedded;

import org.junit.jupiter.api.RepeatedTest;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** A client whose connection is reset is one INFO line in the server's log, not an ERROR with a stack trace. */
class QuietDisconnectsTest {
    /** Repeated: the first connections right after start() once raced the handler's installation. */
    @RepeatedTest(10)
    void clientConnectionReset_logsOneInfoLine_noStackTrace() throws Exception {
        PrintStream saved = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        String log;
        try (EmbeddedServer server = EmbeddedServer.inMemory().start()) {
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
            for (int i = 0; i < 3; i++) {
                Socket socket = new Socket("127.0.0.1", server.port());
                socket.setSoLinger(true, 0); // close with a reset, as a killed client's kernel does
                socket.close();
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (countOf(captured.toString(StandardCharsets.UTF_8), "disconnected") < 3 && System.nanoTime() < deadline
                    && !captured.toString(StandardCharsets.UTF_8).contains("ERROR")) {
                Thread.sleep(20);
            }
            log = captured.toString(StandardCharsets.UTF_8);
        } finally {
            System.setErr(saved);
        }

        assertThat(log).doesNotContain("ERROR", "\tat ", "Exception");
        assertThat(countOf(log, "INFO io.mongo2pc.embedded.internal.QuietDisconnects - client ")).isEqualTo(3);
        assertThat(log.lines().count()).isEqualTo(3);
    }

    private static int countOf(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
            n++;
        }
        return n;
    }
}
