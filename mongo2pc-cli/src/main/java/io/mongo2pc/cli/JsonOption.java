package io.mongo2pc.cli;

import picocli.CommandLine.Option;

/**
 * The {@code --json} option, declared once and mixed into every command that can print one JSON
 * object ({@code @Mixin JsonOption json}); {@link BaseCommand#json()} finds it. The keys each
 * command prints are in its help's footer.
 */
final class JsonOption {
    @Option(names = "--json", description = "print one JSON object on stdout instead of text (an error as {\"error\": ...})")
    boolean enabled;
}
