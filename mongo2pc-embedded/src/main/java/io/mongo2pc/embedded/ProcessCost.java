package io.mongo2pc.embedded;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What this JVM has cost so far: its CPU time (every thread, user and kernel) and, on Linux, the
 * context switches of its live threads (voluntary and involuntary, from {@code /proc/self/task}).
 * The embedded server reports it in {@code serverStatus} under {@code mongo2pc}, and {@code bench}
 * reads it on both sides to show what a transfer costs beside how fast it goes.
 *
 * <p>A thread that ends between two readings takes its context switches with it, so compare
 * readings taken while the same threads live (a measured phase). Immutable.
 *
 * @param cpuNanos        the process's CPU time, or -1 where the JVM cannot tell
 * @param contextSwitches the live threads' context switches, or -1 where the OS does not say
 */
public record ProcessCost(long cpuNanos, long contextSwitches) {

    private static final Path TASKS = Path.of("/proc/self/task");

    /** The cost of this JVM so far. */
    public static ProcessCost now() {
        long cpu = -1;
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            cpu = os.getProcessCpuTime();
        }
        return new ProcessCost(cpu, liveThreadSwitches());
    }

    /** What was spent between {@code earlier} and this reading (-1 for a figure either lacks). */
    public ProcessCost since(ProcessCost earlier) {
        return new ProcessCost(difference(cpuNanos, earlier.cpuNanos), difference(contextSwitches, earlier.contextSwitches));
    }

    private static long difference(long later, long earlier) {
        return later < 0 || earlier < 0 ? -1 : later - earlier;
    }

    private static long liveThreadSwitches() {
        if (!Files.isDirectory(TASKS)) {
            return -1;
        }
        long total = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                total += switchesOf(task.resolve("status"));
            }
        } catch (IOException e) {
            return -1;
        }
        return total;
    }

    /** A thread's voluntary and involuntary switches; 0 for one that ended while it was read. */
    private static long switchesOf(Path status) {
        long switches = 0;
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
                    switches += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                }
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return switches;
    }
}
