package io.mongo2pc.cli;

import java.lang.reflect.Proxy;
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

    /**
     * Installs {@code action} as the handler of signal {@code name} through {@code sun.misc.Signal}
     * (module jdk.unsupported), reached reflectively so the build has no internal-API warnings.
     */
    private static boolean handle(String name, Runnable action) {
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal");
            Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
            Object handler = Proxy.newProxyInstance(Signals.class.getClassLoader(), new Class<?>[] {handlerClass},
                    (proxy, method, args) -> {
                        if (method.getName().equals("handle")) {
                            action.run();
                        }
                        return null;
                    });
            Object signal = signalClass.getConstructor(String.class).newInstance(name);
            signalClass.getMethod("handle", signalClass, handlerClass).invoke(null, signal, handler);
            return true;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return false;
        }
    }

    /** Runs {@code onStop} once on the first SIGTERM or SIGINT. */
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
            handled &= handle(name, once);
        }
        if (!handled) {
            Runtime.getRuntime().addShutdownHook(new Thread(once, "mongo2pc-stop"));
        }
    }
}
