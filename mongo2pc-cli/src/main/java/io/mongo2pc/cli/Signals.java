package io.mongo2pc.cli;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Lets long-running commands ({@code serve}, {@code worker}) stop cleanly on SIGTERM or SIGINT and
 * exit 0. Installed only when running as the {@code mongo2pc} program (never inside tests that
 * call commands in-process), with a shutdown hook as the fallback where signals cannot be handled.
 */
final class Signals {
    private static volatile boolean enabled;

    private Signals() { }

    /** Called by {@link Main#main}: this JVM is the mongo2pc program. */
    static void enable() {
        enabled = true;
    }

    /** Runs {@code onStop} once on the first SIGTERM or SIGINT. */
    @SuppressWarnings("removal")
    static void onStop(Runnable onStop) {
        if (!enabled) {
            return;
        }
        AtomicBoolean fired = new AtomicBoolean();
        Runnable once = () -> {
            if (fired.compareAndSet(false, true)) {
                onStop.run();
            }
        };
        boolean handled = true;
        for (String name : new String[] {"TERM", "INT"}) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> once.run());
            } catch (IllegalArgumentException | LinkageError e) {
                handled = false;
            }
        }
        if (!handled) {
            Runtime.getRuntime().addShutdownHook(new Thread(once, "mongo2pc-stop"));
        }
    }
}
