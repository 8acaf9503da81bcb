package io.mongo2pc.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.DecimalNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.Numbers;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.bson.types.Binary;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * JSON output through Jackson. Numbers stay JSON numbers, all in plain decimal (a Decimal128 as
 * stored, {@code 10.00}; a double as {@code 0.0000001}, never {@code 1.0E-7}); ObjectIds print as
 * their hex string and dates as ISO-8601.
 */
public final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN, true)
            // documents read back from their extended JSON keep decimals exact, trailing zeros too
            .configure(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS, true)
            .setNodeFactory(JsonNodeFactory.withExactBigDecimals(true));
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private Json() { }

    public static ObjectNode object() {
        return NODES.objectNode();
    }

    /**
     * The contract's {"id","state","reason","code"} of a transaction's outcome, {@code id} as printed;
     * and {@code "failedOperation"} ({@link #failedOperation}) when a refused operation canceled it.
     */
    static ObjectNode outcome(Object id, TransactionOutcome outcome) {
        ObjectNode node = outcome(id, outcome.state(), outcome.reason(), outcome.reasonCode());
        if (outcome.failedOperation() != null) {
            node.set("failedOperation", failedOperation(outcome.failedOperation()));
        }
        return node;
    }

    /** {@code {"index","target","db","coll","id"}}: which operation was refused (index from 0) and its document. */
    static ObjectNode failedOperation(TransactionOutcome.FailedOperation failed) {
        ObjectNode node = object();
        node.put("index", failed.index());
        node.put("target", failed.document().target());
        node.put("db", failed.document().database());
        node.put("coll", failed.document().collection());
        node.set("id", value(failed.document().id()));
        return node;
    }

    /** {"id","state","reason","code"}: {@code code} is the reason's {@link ReasonCode}, null when there is none. */
    static ObjectNode outcome(Object id, TransactionState state, String reason, ReasonCode code) {
        ObjectNode node = object();
        node.set("id", value(id));
        node.put("state", state == null ? null : state.stored());
        node.put("reason", reason);
        node.put("code", code == null ? null : code.name());
        return node;
    }

    /**
     * A stored document as MongoDB's relaxed extended JSON, its ids and dates typed
     * ({@code {"$oid": ...}}, {@code {"$date": ...}}), but a Decimal128 as the plain decimal number
     * the rest of the output shows ({@code 795.245}, not {@code {"$numberDecimal": "795.245"}}).
     */
    static String extended(Document doc, boolean indent) {
        return doc.toJson(JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).indent(indent)
                .decimal128Converter((value, writer) -> {
                    if (Numbers.isFinite(value)) {
                        writer.writeNumber(Numbers.exact(value).toPlainString());
                    } else {
                        writer.writeStartObject();
                        writer.writeString("$numberDecimal", value.toString());
                        writer.writeEndObject();
                    }
                })
                .doubleConverter((value, writer) -> {
                    if (Numbers.isFinite(value)) {
                        writer.writeNumber(Numbers.shown(value).toPlainString());
                    } else {
                        writer.writeStartObject();
                        writer.writeString("$numberDouble", value.toString());
                        writer.writeEndObject();
                    }
                }).build());
    }

    /** {@link #extended} as a JSON object node, for one object on stdout. */
    static ObjectNode extendedNode(Document doc) {
        try {
            return (ObjectNode) MAPPER.readTree(extended(doc, false));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot read back the document's JSON: " + e.getOriginalMessage(), e);
        }
    }

    static ArrayNode array() {
        return NODES.arrayNode();
    }

    static String write(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON: " + e.getMessage(), e);
        }
    }

    /** A JSON value for a value read from MongoDB (or a plain Java value). */
    static JsonNode value(Object v) {
        if (v == null) {
            return NODES.nullNode();
        }
        if (v instanceof String s) {
            return NODES.textNode(s);
        }
        if (v instanceof Boolean b) {
            return NODES.booleanNode(b);
        }
        if (v instanceof Integer i) {
            return NODES.numberNode(i);
        }
        if (v instanceof Long l) {
            return NODES.numberNode(l);
        }
        if (v instanceof Double d) {
            return d.isNaN() || d.isInfinite() ? NODES.textNode(d.toString()) : DecimalNode.valueOf(Numbers.shown(d));
        }
        if (v instanceof Decimal128 d) {
            return Numbers.isFinite(d) ? DecimalNode.valueOf(Numbers.exact(d)) : NODES.textNode(d.toString());
        }
        if (v instanceof BigDecimal b) {
            return DecimalNode.valueOf(b);
        }
        if (v instanceof Number n) {
            return DecimalNode.valueOf(new BigDecimal(n.toString()));
        }
        if (v instanceof ObjectId oid) {
            return NODES.textNode(oid.toHexString());
        }
        if (v instanceof Date date) {
            return NODES.textNode(date.toInstant().toString());
        }
        if (v instanceof Instant instant) {
            return NODES.textNode(instant.toString());
        }
        if (v instanceof UUID uuid) {
            return NODES.textNode(uuid.toString());
        }
        if (v instanceof Binary bin) {
            return NODES.textNode(Base64.getEncoder().encodeToString(bin.getData()));
        }
        if (v instanceof Map<?, ?> map) {
            ObjectNode node = object();
            for (Map.Entry<?, ?> e : map.entrySet()) {
                node.set(String.valueOf(e.getKey()), value(e.getValue()));
            }
            return node;
        }
        if (v instanceof List<?> list) {
            ArrayNode node = array();
            list.forEach(item -> node.add(value(item)));
            return node;
        }
        if (v instanceof BsonValue bson) {
            return NODES.textNode(bson.toString());
        }
        return NODES.textNode(v.toString());
    }
}
