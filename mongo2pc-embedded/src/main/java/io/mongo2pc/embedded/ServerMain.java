package io.mongo2pc.embedded;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * Runs an {@link EmbeddedServer} in its own process until SIGTERM/SIGINT.
 *
 * <pre>java io.mongo2pc.embedded.ServerMain [--port P] (--data DIR | --in-memory)
 *     [--worker-threads N] [--commit-delay-micros N] [--max-concurrent-forces N]</pre>
 *
 * The last three are {@link EmbeddedServer#withWorkerThreads}, {@link EmbeddedServer#withCommitDelay} and
 * {@link EmbeddedServer#withMaxConcurrentForces}. Prints exactly one line containing {@code mongodb://127.0.0.1:P} once the server accepts
 * connections. Exit code 2 for bad arguments, 1 if the server cannot start.
 */
public final class ServerMain {

    private ServerMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        int port = 0;
        Path data = null;
        boolean inMemory = false;
        Integer workerThreads = null;
        Long commitDelayMicros = null;
        Integer maxConcurrentForces = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port" -> port = (int) number(args, ++i, "--port");
                case "--worker-threads" -> workerThreads = (int) number(args, ++i, "--worker-threads");
                case "--commit-delay-micros" -> commitDelayMicros = number(args, ++i, "--commit-delay-micros");
                case "--max-concurrent-forces" -> maxConcurrentForces = (int) number(args, ++i, "--max-concurrent-forces");
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
            if (workerThreads != null) {
                server = server.withWorkerThreads(workerThreads);
            }
            if (commitDelayMicros != null) {
                server = server.withCommitDelay(Duration.ofNanos(commitDelayMicros * 1000));
            }
            if (maxConcurrentForces != null) {
                server = server.withMaxConcurrentForces(maxConcurrentForces);
            }
        } catch (IllegalArgumentException e) {
            usage(e.getMessage());
        }
        EmbeddedServer started = server;
        try {
            started.start(port);
        } catch (RuntimeException e) {
            System.err.println("cannot start the embedded server: " + e.getMessage());
            System.exit(1);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            started.close();
            stopped.countDown();
        }, "mongo2pc-shutdown"));
        System.out.println("mongo2pc embedded server listening on " + started.uri()
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

    private static long number(String[] args, int i, String option) {
        String text = value(args, i, option);
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            usage(option + " needs a whole number, got " + text);
            return 0;
        }
    }

    private static void usage(String problem) {
        System.err.println(problem);
        System.err.println("usage: ServerMain [--port P] (--data DIR | --in-memory)"
                + " [--worker-threads N] [--commit-delay-micros N] [--max-concurrent-forces N]");
        System.exit(2);
    }
}
