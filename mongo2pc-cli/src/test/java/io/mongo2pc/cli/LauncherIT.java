package io.mongo2pc.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code ./mongo2pc} launcher at the repository root runs the packaged jar from any folder. */
class LauncherIT {
    private static final Path LAUNCHER = Path.of("..", "mongo2pc").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    @Test
    void launcher_fromAnotherFolder_runsTheBuiltCli() throws Exception {
        Result result = run(LAUNCHER, "--help");

        assertThat(result.exit).as(result.out).isZero();
        assertThat(result.out).contains("Usage: mongo2pc").contains("demo");
    }

    @Test
    void launcher_withoutABuild_saysHowToBuild() throws Exception {
        Path copy = dir.resolve("mongo2pc");
        Files.copy(LAUNCHER, copy);
        copy.toFile().setExecutable(true);

        Result result = run(copy, "demo");

        assertThat(result.exit).isEqualTo(2);
        assertThat(result.out).contains("not built yet").contains("mvn -q -DskipTests package");
    }

    private record Result(int exit, String out) {
    }

    private Result run(Path launcher, String... args) throws IOException, InterruptedException {
        String[] command = new String[args.length + 1];
        command[0] = launcher.toString();
        System.arraycopy(args, 0, command, 1, args.length);
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("launcher finished").isTrue();
        return new Result(process.exitValue(), out);
    }
}
