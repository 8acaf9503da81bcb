package io.mongo2pc.cli;

import org.bson.types.ObjectId;
import picocli.CommandLine.Option;

/**
 * {@code --id ID} of {@code transfer}, {@code submit} and {@code tx}: the caller's transaction id, which
 * makes the command idempotent (the library's caller ids): the same command again with the same id
 * is the same transaction, never a second one.
 */
final class IdOption {
    @Option(names = "--id", paramLabel = "ID",
            description = {"the transaction's id (24 hex digits: an ObjectId; anything else: a string): the same command",
                    "again with this id is the same transaction, never a second one, and says it already ran"})
    String text;

    /** The id as stored, or null when none was given (the library makes one). */
    Object id() {
        if (text == null) {
            return null;
        }
        if (text.isBlank()) {
            throw CliException.badInput("--id must not be empty");
        }
        return text.length() == 24 && ObjectId.isValid(text) ? new ObjectId(text) : text;
    }
}
