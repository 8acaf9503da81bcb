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
            } else if (operation instanceof Operation.Insert insert) {
                doc.append("doc", insert.content());
            } else if (operation instanceof Operation.Update update) {
                doc.append("update", update.update());
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
            } else if ("insert".equals(kind)) {
                operations.add(new Operation.Insert(ref, doc.get("doc", Document.class)));
            } else if ("update".equals(kind)) {
                operations.add(new Operation.Update(ref, doc.get("update", Document.class), guard));
            } else if ("delete".equals(kind)) {
                operations.add(new Operation.Delete(ref, guard));
            } else {
                throw new IllegalStateException("unknown operation '" + kind + "' in stored transaction: " + doc.toJson());
            }
        }
        return operations;
    }

    static String kind(Operation operation) {
        if (operation instanceof Operation.Increment) {
            return "inc";
        }
        if (operation instanceof Operation.Insert) {
            return "insert";
        }
        if (operation instanceof Operation.Update) {
            return "update";
        }
        return "delete";
    }
}
