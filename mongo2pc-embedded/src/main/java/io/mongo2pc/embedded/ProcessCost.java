package io.mongo2pc.embedded;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * What this JVM has cost so far: its CPU time (every thread, user and kernel) and, on Linux, the
 * context switches of its threads (voluntary and involuntary, from {@code /proc/self/task}).
 * The embedded server reports it in {@code serverStatus} under {@code mongo2pc}, and {@code bench}
 * reads it on both sides to show what a transfer costs beside how fast it goes.
 *
 * <p>Readings never go down: a thread that ended keeps counting with the switches it had at the last
 * reading that saw it alive (what it did after that reading is lost, as is all of a thread that
 * started and ended between two readings). Immutable.
 *
 * @param cpuNanos        the process's CPU time, or -1 where the JVM cannot tell
 * @param contextSwitches the threads' context switches, or -1 where the OS does not say
 */
public record ProcessCost(long cpuNanos, long contextSwitches) {

    private static final Path TASKS = Path.of("/proc/self/task");
    /** Each thread's switches at the last reading that saw it alive, by thread id. */
    private static final Map<String, Long> LAST_SEEN = new HashMap<>();
    /** The switches of threads that ended, as last seen. */
    private static long ended;

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

    private static synchronized long liveThreadSwitches() {
        if (!Files.isDirectory(TASKS)) {
            return -1;
        }
        Map<String, Long> live = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                String tid = task.getFileName().toString();
                // A thread that ended while it was read keeps what it was last seen with.
                live.put(tid, Math.max(switchesOf(task.resolve("status")), LAST_SEEN.getOrDefault(tid, 0L)));
            }
        } catch (IOException e) {
            return -1;
        }
        long total = 0;
        for (Map.Entry<String, Long> seen : LAST_SEEN.entrySet()) {
            if (!live.containsKey(seen.getKey())) {
                ended += seen.getValue();
            }
        }
        LAST_SEEN.clear();
        LAST_SEEN.putAll(live);
        for (long switches : live.values()) {
            total += switches;
        }
        return ended + total;
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
