package io.mongo2pc.cli;

import org.bson.types.ObjectId;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads a transaction id typed on the command line: 24 hex digits are an ObjectId; anything else
 * is tried as a string and, when it is an integer, also as a number (the tutorial's documents
 * use {@code _id: 1}).
 */
final class TransactionIds {
    private TransactionIds() { }

    static List<Object> candidates(String text) {
        if (text == null || text.isEmpty()) {
            throw CliException.badInput("transaction id must not be empty");
        }
        List<Object> ids = new ArrayList<>();
        if (text.length() == 24 && ObjectId.isValid(text)) {
            ids.add(new ObjectId(text));
            return ids;
        }
        ids.add(text);
        if (text.matches("[+-]?\\d{1,18}")) {
            ids.add(Long.parseLong(text));
        }
        return ids;
    }

    /** An id as printed for a human or in JSON: ObjectIds as their hex string. */
    static Object printable(Object id) {
        return id instanceof ObjectId oid ? oid.toHexString() : id;
    }
}
