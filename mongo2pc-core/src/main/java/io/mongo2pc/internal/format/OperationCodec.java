package io.mongo2pc.internal.format;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import org.bson.Document;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Writes operations into the transaction document's {@code ops} array and reads them back, so
 * that a process that never saw the original call can finish or undo it.
 * Public for the participants, state, tworound, recovery and interactive packages and Engine, as are the members they use.
 */
public final class OperationCodec {
    private OperationCodec() { }

    public static List<Document> encode(List<Operation> operations) {
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
            if (!operation.flags().isEmpty()) {
                doc.append("flags", operation.flags().stream().map(Enum::name).sorted().toList());
            }
            encoded.add(doc);
        }
        return encoded;
    }

    public static List<Operation> decode(List<Document> encoded) {
        List<Operation> operations = new ArrayList<>(encoded.size());
        for (Document doc : encoded) {
            DocumentRef ref = new DocumentRef(doc.getString("target"), doc.getString("db"), doc.getString("coll"), doc.get("id"));
            Document guard = doc.get("guard", Document.class);
            String kind = doc.getString("op");
            Set<Operation.Flag> flags = flags(doc);
            if ("inc".equals(kind)) {
                operations.add(new Operation.Increment(ref, doc.get("inc", Document.class), guard, flags));
            } else if ("insert".equals(kind)) {
                operations.add(new Operation.Insert(ref, doc.get("doc", Document.class)));
            } else if ("update".equals(kind)) {
                operations.add(new Operation.Update(ref, doc.get("update", Document.class), guard, flags));
            } else if ("delete".equals(kind)) {
                operations.add(new Operation.Delete(ref, guard));
            } else {
                throw new IllegalStateException("unknown operation '" + kind + "' in stored transaction: " + doc.toJson());
            }
        }
        return operations;
    }

    /** The stored flags; one this version does not know is left out (it can only allow less). */
    private static Set<Operation.Flag> flags(Document doc) {
        Set<Operation.Flag> flags = EnumSet.noneOf(Operation.Flag.class);
        for (Object name : doc.getList("flags", Object.class, List.of())) {
            for (Operation.Flag flag : Operation.Flag.values()) {
                if (flag.name().equals(name)) {
                    flags.add(flag);
                }
            }
        }
        return flags;
    }

    public static String kind(Operation operation) {
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
