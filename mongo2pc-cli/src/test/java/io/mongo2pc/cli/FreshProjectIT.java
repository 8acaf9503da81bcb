package io.mongo2pc.cli;

import io.mongo2pc.embedded.EmbeddedServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fresh Maven project that imports only the BOM and depends on {@code mongo2pc-bank}, as the
 * README tells, compiles the README's {@code Transfers} example and runs it against a server. The
 * built modules are put in a repository of the test's own (never the shared local repository);
 * everything else resolves from the machine's local repository, read as a mirror.
 */
class FreshProjectIT {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final String VERSION = System.getProperty("mongo2pc.version", "0.1.0-SNAPSHOT");
    private static final Path SHARED = Path.of(System.getProperty("maven.localRepo",
            System.getProperty("user.home") + "/.m2/repository"));

    @TempDir
    Path dir;

    @Test
    void freshProject_withOnlyTheBomAndBank_runsTheReadmeExample() throws Exception {
        Path repo = dir.resolve("m2");
        publish(repo, "mongo2pc-parent", ROOT.resolve("pom.xml"), null);
        publish(repo, "mongo2pc-bom", ROOT.resolve("mongo2pc-bom/pom.xml"), null);
        for (String module : List.of("mongo2pc-core", "mongo2pc-bank")) {
            publish(repo, module, ROOT.resolve(module).resolve("pom.xml"),
                    ROOT.resolve(module).resolve("target").resolve(module + "-" + VERSION + ".jar"));
        }
        Path project = dir.resolve("transfers");
        Files.createDirectories(project.resolve("src/main/java"));
        Files.writeString(project.resolve("pom.xml"), freshPom(readmeDependencies()));
        Files.writeString(project.resolve("src/main/java/Transfers.java"), readmeBlock("public class Transfers"));
        Path settings = dir.resolve("settings.xml");
        Files.writeString(settings, "<settings><mirrors><mirror><id>machine</id><mirrorOf>*</mirrorOf><url>"
                + SHARED.toUri() + "</url></mirror></mirrors></settings>");

        Run build = run(project, "mvn", "-B", "-ntp", "-q", "-s", settings.toString(), "-Dmaven.repo.local=" + repo,
                "compile", "org.apache.maven.plugins:maven-dependency-plugin:3.9.0:build-classpath",
                "-Dmdep.outputFile=cp.txt");
        assertThat(build.exit()).as(build.output()).isZero();

        try (EmbeddedServer server = EmbeddedServer.inMemory().start()) {
            String classpath = project.resolve("target/classes") + java.io.File.pathSeparator
                    + Files.readString(project.resolve("cp.txt")).trim();
            Run example = run(project, Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", classpath, "Transfers", server.uri());
            assertThat(example.exit()).as(example.output()).isZero();
            assertThat(example.output()).as("returned at the commit point (finishInBackground, the default)").contains("order-42 is applied");
        }
    }

    /** The README's dependency snippet: the BOM import and the bank dependency, as written there. */
    private static String readmeDependencies() throws IOException {
        Matcher m = Pattern.compile("```xml\\n(.*?)```", Pattern.DOTALL).matcher(readme());
        assertThat(m.find()).as("the README shows the Maven coordinates").isTrue();
        String xml = m.group(1);
        assertThat(xml).contains("<artifactId>mongo2pc-bom</artifactId>", "<scope>import</scope>",
                "<artifactId>mongo2pc-bank</artifactId>");
        return xml.replace("0.1.0-SNAPSHOT", VERSION);
    }

    private static String readmeBlock(String containing) throws IOException {
        Matcher m = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(readme());
        while (m.find()) {
            if (m.group(1).contains(containing)) {
                return m.group(1);
            }
        }
        throw new AssertionError("no Java block with " + containing + " in the README");
    }

    private static String readme() throws IOException {
        return Files.readString(ROOT.resolve("README.md"), StandardCharsets.UTF_8);
    }

    private static String freshPom(String readmeSnippet) {
        return """
                <project xmlns="http://maven.apache.org/POM/4.0.0">
                  <modelVersion>4.0.0</modelVersion>
                  <groupId>example</groupId>
                  <artifactId>transfers</artifactId>
                  <version>1</version>
                  <properties>
                    <maven.compiler.release>17</maven.compiler.release>
                    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
                  </properties>
                %s
                  <build>
                    <pluginManagement>
                      <plugins>
                        <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
                        <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
                      </plugins>
                    </pluginManagement>
                  </build>
                </project>
                """.formatted(readmeSnippet);
    }

    /** Lays out {@code artifact}'s pom (and jar) as an installed artifact of {@code repo}. */
    private static void publish(Path repo, String artifact, Path pom, Path jar) throws IOException {
        Path at = repo.resolve("io/mongo2pc").resolve(artifact).resolve(VERSION);
        Files.createDirectories(at);
        Files.copy(pom, at.resolve(artifact + "-" + VERSION + ".pom"));
        if (jar != null) {
            assertThat(jar).as("built before the integration tests").exists();
            Files.copy(jar, at.resolve(artifact + "-" + VERSION + ".jar"));
        }
    }

    record Run(int exit, String output) { }

    private Run run(Path workDir, String... command) throws IOException, InterruptedException {
        Path log = Files.createTempFile(dir, "run", ".log");
        Process process = new ProcessBuilder(new ArrayList<>(List.of(command))).directory(workDir.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!process.waitFor(5, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " did not finish within 5 minutes: " + Files.readString(log));
        }
        return new Run(process.exitValue(), Files.readString(log));
    }
}
