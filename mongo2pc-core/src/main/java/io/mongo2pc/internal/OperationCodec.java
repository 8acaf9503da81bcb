package io.mongo2pc.internal;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import org.bson.Document;

import java.util.ArrayList;
import java.util.List;

/**
 * Writes operations into the transaction document's {@code ops} array and reads them back, so
 * that a process that never saw the original call can finish or undo it.
 */
final class OperationCodec {
    private OperationCodec() { }

    static List<Document> encode(List<Operation> operations) {
        List<Document> encoded = new ArrayList<>(operations.size());
        for (Operation operation : operations) {
            DocumentRef ref = operation.document();
            Document doc = new Document("op", kind(operation))
                    .append("target", ref.target())
                    .append("db", ref.database())
                    .append("coll", ref.collection())
                    .append("id", ref.id());
            if (operation instanceof Operation.Increment increment) {
                doc.append("inc", increment.increments());
            }
            if (!operation.guard().isEmpty()) {
                doc.append("guard", operation.guard());
            }
            encoded.add(doc);
        }
        return encoded;
    }

    static List<Operation> decode(List<Document> encoded) {
        List<Operation> operations = new ArrayList<>(encoded.size());
        for (Document doc : encoded) {
            DocumentRef ref = new DocumentRef(doc.getString("target"), doc.getString("db"), doc.getString("coll"), doc.get("id"));
            Document guard = doc.get("guard", Document.class);
            String kind = doc.getString("op");
            if ("inc".equals(kind)) {
                operations.add(new Operation.Increment(ref, doc.get("inc", Document.class), guard));
            } else {
                throw new IllegalStateException("unknown operation '" + kind + "' in stored transaction: " + doc.toJson());
            }
        }
        return operations;
    }

    private static String kind(Operation operation) {
        if (operation instanceof Operation.Increment) {
            return "inc";
        }
        throw new IllegalArgumentException("unsupported operation " + operation);
    }
}
