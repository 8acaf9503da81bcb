package io.mongo2pc.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/** {@code console}: the operations console, a web page and a JSON API, until SIGTERM/SIGINT. */
@Command(name = "console", mixinStandardHelpOptions = true,
        description = {"Serves the operations console: a live page at / (counts, throughput and latency, transactions, owners, "
                + "cancel, recover, prune) and a JSON API under /api/.",
                "Binds 127.0.0.1 unless --bind says otherwise; any other address needs --token-file.",
                "Exit 0 when stopped; 1 port in use; 2 bad input (another address without a token)."})
final class ConsoleCommand extends BaseCommand {
    /** The shortest token accepted: a guessable one would be no guard. */
    static final int MIN_TOKEN_LENGTH = 16;

    @Option(names = "--port", paramLabel = "P", defaultValue = "8080",
            description = "TCP port (default: ${DEFAULT-VALUE}; 0 picks a free one)")
    int port;

    @Option(names = "--bind", paramLabel = "ADDR", defaultValue = "127.0.0.1",
            description = "address to listen on (default: ${DEFAULT-VALUE}); any other needs --token-file")
    String bind;

    @Option(names = "--token-file", paramLabel = "F",
            description = "a file of tokens, one a line: a secret of at least 16 characters, alone or after a name and a space "
                    + "(alice SECRET: actions record the name); every request must carry one in the X-Mongo2pc-Token header "
                    + "(open the page as http://HOST:P/#token=SECRET)")
    Path tokenFile;

    @Option(names = "--target", paramLabel = "NAME=URI",
            description = "another MongoDB that operations of generic transactions reach (repeatable)")
    Map<String, String> targets = new LinkedHashMap<>();

    @Option(names = "--refresh", paramLabel = "DURATION", defaultValue = "1s", converter = DurationConverter.class,
            description = "how often the database is read for the page (default: ${DEFAULT-VALUE}; 100ms to 2s)")
    Duration refresh;

    @Override
    protected int run() throws Exception {
        if (port < 0 || port > 65535) {
            throw CliException.badInput("--port must be between 0 and 65535, got " + port);
        }
        if (refresh.compareTo(Duration.ofMillis(100)) < 0 || refresh.compareTo(Duration.ofSeconds(2)) > 0) {
            throw CliException.badInput("--refresh must be between 100ms and 2s, got " + DurationConverter.format(refresh));
        }
        boolean loopback = isLoopback(bind);
        Map<String, String> tokens = tokenFile == null ? Map.of() : readTokens(tokenFile);
        if (!loopback && tokens.isEmpty()) {
            throw CliException.badInput("--bind " + bind + " lets other machines reach the console: give --token-file F "
                    + "(a secret of at least " + MIN_TOKEN_LENGTH + " characters) so that every request must carry it");
        }
        ConsolePage page = new ConsolePage();
        try (Session session = open(targets);
             ConsoleSampler sampler = new ConsoleSampler(session, refresh, globals().lease())) {
            sampler.start();
            ConsoleServer server = new ConsoleServer(new ConsoleApi(session, sampler), page, bind, port, tokens, loopback);
            try {
                server.start();
            } catch (Exception e) {
                server.close();
                throw new CliException(ExitCodes.NOT_OK, "cannot listen on " + bind + ":" + port + ": " + e.getMessage()
                        + (port == 0 ? "" : " (is the port in use? pick another with --port, or --port 0 for a free one)"), e);
            }
            try (server) {
                String host = bind.contains(":") ? "[" + bind + "]" : bind;
                say("mongo2pc console at http://" + host + ":" + server.port() + "/" + (tokens.isEmpty() ? ""
                        : " (every request needs the token: open http://" + host + ":" + server.port() + "/#token=... )")
                        + " on " + session.connection().description() + ", database " + session.database()
                        + "; stop it with Ctrl-C or SIGTERM");
                CountDownLatch stop = new CountDownLatch(1);
                Signals.onStop(stop::countDown);
                try {
                    stop.await();
                } catch (InterruptedException e) {
                    // stopped by the caller (tests run the console in a thread): close everything as for SIGTERM;
                    // the thread ends with this command, so the interrupt has done its work
                }
            }
        }
        return ExitCodes.OK;
    }

    private static boolean isLoopback(String bind) {
        try {
            InetAddress[] addresses = InetAddress.getAllByName(bind);
            for (InetAddress address : addresses) {
                if (!address.isLoopbackAddress()) {
                    return false;
                }
            }
            return addresses.length > 0;
        } catch (UnknownHostException e) {
            throw CliException.badInput("--bind " + bind + " is not an address of this machine");
        }
    }

    /**
     * The tokens of {@code file}, each token's secret by its name: one a line, {@code NAME SECRET}, or
     * a bare {@code SECRET} (named {@code token}); the name is what actions record as who did them.
     */
    private static Map<String, String> readTokens(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            throw CliException.badInput("cannot read --token-file " + file + ": " + Words.plain(e.getMessage()));
        }
        Map<String, String> tokens = new LinkedHashMap<>();
        for (String line : lines) {
            String[] words = line.strip().split("\\s+");
            if (words.length == 1 && words[0].isEmpty()) {
                continue;
            }
            String name = words.length == 2 ? words[0] : "token";
            String secret = words[words.length - 1];
            if (words.length > 2 || secret.length() < MIN_TOKEN_LENGTH || secret.chars().anyMatch(c -> c < 0x21 || c > 0x7e)
                    || tokens.containsKey(name)) {
                throw CliException.badInput("--token-file " + file + " must hold one token a line: a secret of at least "
                        + MIN_TOKEN_LENGTH + " printable characters without spaces (e.g. from `openssl rand -hex 24`), "
                        + "after a name and a space to name it (`alice SECRET`), each name once");
            }
            tokens.put(name, secret);
        }
        if (tokens.isEmpty()) {
            throw CliException.badInput("--token-file " + file + " holds no token (one a line: SECRET, or NAME SECRET)");
        }
        return tokens;
    }
}
