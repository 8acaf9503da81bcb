package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Runs CLI commands in this JVM, as {@code new CommandLine(new Main()).execute(args)} with captured output. */
final class CliRunner {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    record Result(int exitCode, String out, String err) {
        /** stdout as the one JSON object it must be. */
        JsonNode json() {
            try {
                JsonNode node = MAPPER.readTree(out);
                if (node == null || !node.isObject()) {
                    throw new AssertionError("stdout is not one JSON object: " + out);
                }
                return node;
            } catch (java.io.IOException e) {
                throw new AssertionError("stdout is not one JSON object: " + out + "\nstderr: " + err, e);
            }
        }

        List<String> keys() {
            List<String> keys = new ArrayList<>();
            Iterator<String> names = json().fieldNames();
            names.forEachRemaining(keys::add);
            return keys;
        }

        @Override
        public String toString() {
            return "exit " + exitCode + "\nstdout: " + out + "\nstderr: " + err;
        }
    }

    private final List<String> globals;

    CliRunner(String... globals) {
        this.globals = List.of(globals);
    }

    Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = commandLine(out, err).execute(command(args));
        return new Result(exit, out.toString(), err.toString());
    }

    /** Starts a command in a thread of this JVM, whose output can be read while it runs. */
    Running start(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = commandLine(out, err);
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> cl.execute(command(args)),
                task -> new Thread(task, "cli-command").start());
        return new Running(exit, out, err);
    }

    /** A command running in a thread of this JVM. */
    record Running(CompletableFuture<Integer> exit, StringWriter out, StringWriter err) {
        /** Waits for the command to end and returns its result. */
        Result join() {
            return new Result(exit.join(), out.toString(), err.toString());
        }
    }

    private static CommandLine commandLine(StringWriter out, StringWriter err) {
        CommandLine cl = Main.configure(new CommandLine(new Main()));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return cl;
    }

    private String[] command(String... args) {
        List<String> all = new ArrayList<>(globals);
        all.addAll(List.of(args));
        return all.toArray(String[]::new);
    }
}
