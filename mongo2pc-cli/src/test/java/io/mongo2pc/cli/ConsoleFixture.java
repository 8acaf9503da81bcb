package io.mongo2pc.cli;

import io.mongo2pc.testing.TestManagers;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.testkit.EmbeddedMongo;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real {@code mongo2pc console} on a free port, run in a thread of this JVM as the command line
 * runs it, and a real HTTP client for it. Closing it stops the console (an interrupt, as SIGTERM
 * does for the program) and waits for it to exit.
 */
final class ConsoleFixture implements AutoCloseable {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Pattern URL = Pattern.compile("console at (http://\\S+/)");

    record Reply(int status, String body, JsonNode json) { }

    private final Thread thread;
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final AtomicInteger exit = new AtomicInteger(-1);
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final String url;
    private String token;

    /** Starts {@code mongo2pc ARGS console --port 0 [consoleArgs]} and waits until it serves. */
    ConsoleFixture(List<String> globals, String... consoleArgs) {
        List<String> args = new ArrayList<>(globals);
        args.addAll(List.of("console", "--port", "0", "--refresh", "200ms"));
        args.addAll(List.of(consoleArgs));
        CommandLine cl = Main.configure(new CommandLine(new Main()));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        thread = new Thread(() -> exit.set(cl.execute(args.toArray(String[]::new))), "console-under-test");
        thread.setDaemon(true);
        thread.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        Matcher m = URL.matcher("");
        while (!(m = URL.matcher(out.toString())).find()) {
            if (!thread.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError("the console did not start: exit " + exit.get() + "\nstdout: " + out + "\nstderr: " + err);
            }
            pause(20);
        }
        url = m.group(1);
    }

    /**
     * The global options of a console on the server at {@code uri} that gives up on a read within
     * seconds once that server is gone: a second of server selection and a second of retries
     * ({@code --retry-timeout}), not the defaults' 5 s and 30 s.
     */
    static List<String> givingUpQuickly(String uri, String database) {
        return List.of("--uri", uri + "/?serverSelectionTimeoutMS=1000", "--retry-timeout", "1s", "--db", database);
    }

    /** Sends this token in the token header from now on (null: none). */
    ConsoleFixture withToken(String token) {
        this.token = token;
        return this;
    }

    String url() {
        return url;
    }

    String output() {
        return out + "\n" + err;
    }

    Reply get(String path) {
        return send("GET", path, true);
    }

    /** A POST as the page sends it: with the token header. */
    Reply post(String path) {
        return send("POST", path, true);
    }

    Reply send(String method, String path, boolean tokenHeader) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url + path.replaceFirst("^/", "")))
                .timeout(Duration.ofSeconds(30)).method(method, HttpRequest.BodyPublishers.noBody());
        if (tokenHeader) {
            b.header(ConsoleServer.TOKEN_HEADER, token == null ? "none" : token);
        }
        return send(b.build());
    }

    Reply send(HttpRequest request) {
        try {
            HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
            JsonNode json = null;
            if (r.headers().firstValue("Content-Type").orElse("").startsWith("application/json")) {
                json = MAPPER.readTree(r.body());
            }
            return new Reply(r.statusCode(), r.body(), json);
        } catch (IOException e) {
            throw new AssertionError("request " + request.uri() + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The status once the console has read the database (its first reading comes within a refresh). */
    JsonNode status() {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        Reply r;
        while ((r = get("/api/status")).status() != 200) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no status: " + r);
            }
            pause(50);
        }
        return r.json();
    }

    /**
     * A transfer A -> B of 100 whose owner (application "dying", lease {@code lease}) died after its
     * debit, with its document pending (round 1 inserts it: no commit insert); its id.
     */
    static String stuckTransfer(EmbeddedMongo mongo, Duration lease) {
        AtomicBoolean fired = new AtomicBoolean();
        CrashHook crash = (point, id) -> {
            if (point.equals(CrashPoint.after(CrashPoint.Step.APPLY, 0)) && fired.compareAndSet(false, true)) {
                throw new IllegalStateException(String.valueOf(id));
            }
        };
        TransactionManager dying = Bank.configure(TestManagers.builder(mongo.client(), mongo.database(), "dying")
                .lease(lease).commitInsert(false).crashHook(crash)).build();
        try {
            new Bank(dying).transfer("A", "B", 100L);
            throw new AssertionError("the crash hook did not fire");
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
    }

    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Override
    public void close() {
        thread.interrupt();
        try {
            thread.join(Duration.ofSeconds(30).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            throw new AssertionError("the console did not stop: " + output());
        }
        if (exit.get() != ExitCodes.OK) {
            throw new AssertionError("the console exited " + exit.get() + ": " + output());
        }
    }
}
