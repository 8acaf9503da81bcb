package io.mongo2pc.embedded;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * Runs an {@link EmbeddedServer} in its own process until SIGTERM/SIGINT.
 *
 * <pre>java io.mongo2pc.embedded.ServerMain [--port P] (--data DIR | --in-memory)</pre>
 *
 * Prints exactly one line containing {@code mongodb://127.0.0.1:P} once the server accepts
 * connections. Exit code 2 for bad arguments, 1 if the server cannot start.
 */
public final class ServerMain {

    private ServerMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        int port = 0;
        Path data = null;
        boolean inMemory = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port" -> port = Integer.parseInt(value(args, ++i, "--port"));
                case "--data" -> data = Path.of(value(args, ++i, "--data"));
                case "--in-memory" -> inMemory = true;
                default -> usage("unknown argument " + args[i]);
            }
        }
        if (inMemory == (data != null)) {
            usage("give exactly one of --data DIR or --in-memory");
        }
        EmbeddedServer server = inMemory ? EmbeddedServer.inMemory() : EmbeddedServer.onDisk(data);
        try {
            server.start(port);
        } catch (RuntimeException e) {
            System.err.println("cannot start the embedded server: " + e.getMessage());
            System.exit(1);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "mongo2pc-shutdown"));
        System.out.println("mongo2pc embedded server listening on " + server.uri()
                + (inMemory ? " (in memory)" : " (data in " + data.toAbsolutePath() + ")"));
        System.out.flush();
        stopped.await();
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            usage(option + " needs a value");
        }
        return args[i];
    }

    private static void usage(String problem) {
        System.err.println(problem);
        System.err.println("usage: ServerMain [--port P] (--data DIR | --in-memory)");
        System.exit(2);
    }
}
