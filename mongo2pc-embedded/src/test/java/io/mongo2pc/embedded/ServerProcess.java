package io.mongo2pc.embedded;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** {@link ServerMain} in its own JVM with the test classpath; its output is kept for diagnostics. */
final class ServerProcess implements AutoCloseable {

    final Process process;
    final String uri;
    final List<String> output;

    private ServerProcess(Process process, String uri, List<String> output) {
        this.process = process;
        this.uri = uri;
        this.output = output;
    }

    static ServerProcess start(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"),
                ServerMain.class.getName()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        List<String> output = Collections.synchronizedList(new ArrayList<>());
        String line;
        while ((line = out.readLine()) != null) {
            output.add(line);
            int at = line.indexOf("mongodb://127.0.0.1:");
            if (at >= 0) {
                String uri = line.substring(at).split("\\s")[0];
                Thread drain = new Thread(() -> out.lines().forEach(output::add), "server-output");
                drain.setDaemon(true);
                drain.start();
                return new ServerProcess(process, uri, output);
            }
        }
        throw new IOException("ServerMain exited with " + process.onExit().join().exitValue()
                + " before listening; output: " + output);
    }

    /** SIGKILL: no shutdown hook, no flush. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGTERM: clean shutdown. */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            kill();
        }
    }
}
