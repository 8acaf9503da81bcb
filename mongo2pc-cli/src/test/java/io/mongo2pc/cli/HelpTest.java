package io.mongo2pc.cli;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** What a newcomer reads: `help`, one whole line per command, the global options once, tx's format. */
class HelpTest {
    private final CliRunner cli = new CliRunner();

    /** The command list of `mongo2pc --help`: name and summary, one line each. */
    private static List<String> commandList(String help) {
        List<String> lines = new ArrayList<>();
        boolean in = false;
        for (String line : help.split("\\R")) {
            if (line.equals("Commands:")) {
                in = true;
            } else if (in && line.isBlank()) {
                break;
            } else if (in) {
                lines.add(line);
            }
        }
        return lines;
    }

    @Test
    void help_andHelpCommand_work_andEveryCommandHasAOneLineSentence() {
        CliRunner.Result root = cli.run("help");
        CliRunner.Result transfer = cli.run("help", "transfer");

        assertThat(root.exitCode()).isZero();
        assertThat(transfer.exitCode()).isZero();
        assertThat(transfer.out()).contains("Usage: mongo2pc transfer", "SRC DST AMOUNT");
        List<String> commands = commandList(root.out());
        assertThat(commands).hasSize(Main.commandLine().getSubcommands().size());
        for (String line : commands) {
            assertThat(line).as("a command's summary is one whole line").matches("  \\S+\\s+\\S.*\\.").hasSizeLessThanOrEqualTo(80);
        }
        assertThat(root.out()).contains("4 not found");
    }

    @Test
    void globalOptions_areShownOnce_notUnderEveryCommand() {
        CliRunner.Result root = cli.run("--help");
        for (String command : Main.commandLine().getSubcommands().keySet()) {
            CliRunner.Result help = cli.run("help", command);
            assertThat(help.out()).as(command).doesNotContain("--uri=", "--lease=", "--db=").contains("see `mongo2pc --help`");
        }
        assertThat(root.out()).contains("--uri=URI", "--lease=DURATION", "--retry-timeout=DURATION", "--db=NAME", "--target=NAME=URI");
    }

    @Test
    void txHelp_documentsEveryKeyOfEveryOperation_withAnExampleEach() {
        String help = cli.run("tx", "--help").out();

        for (String key : List.of("\"op\"", "\"db\"", "\"coll\"", "\"target\"", "\"id\"", "\"guard\"", "\"doc\"", "\"update\"", "\"inc\"")) {
            assertThat(help).contains(key);
        }
        for (String op : List.of("insert", "update", "delete", "inc")) {
            assertThat(help).contains("{\"op\": \"" + op + "\"");
        }
    }

    @Test
    void serve_refusesUri_insteadOfIgnoringIt() {
        CliRunner.Result r = cli.run("--uri", "mongodb://127.0.0.1:1", "serve", "--in-memory", "--port", "0");

        assertThat(r.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err()).contains("takes no --uri");
    }
}
