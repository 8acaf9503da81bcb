package io.mongo2pc.internal.admin;

import org.bson.Document;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;

/**
 * Where a page of the transaction list ended, as opaque text for the next call. The list is sorted
 * by {@code lastModified} (newest first), which the server may store finer than the millisecond
 * the driver reads; so the cursor holds the last page's millisecond and the ids already returned
 * within it, and the next page skips exactly those (an order inside one millisecond is never
 * assumed). Transactions never stamped come last; there the cursor counts how many were returned.
 * Public for the API (io.mongo2pc), as are the members they use.
 *
 * @param millis   the millisecond of {@code lastModified} the last page ended in; null: it ended among the unstamped
 * @param seen     ids of that millisecond already returned
 * @param unstamped how many unstamped transactions were returned (when {@code millis} is null)
 */
public record ListCursor(Long millis, List<Object> seen, int unstamped) {
    private static final JsonWriterSettings JSON = JsonWriterSettings.builder().outputMode(JsonMode.EXTENDED).build();

    public ListCursor {
        seen = List.copyOf(seen);
    }

    public String encode() {
        Document doc = millis != null ? new Document("t", millis).append("ids", seen) : new Document("n", unstamped);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(doc.toJson(JSON).getBytes(StandardCharsets.UTF_8));
    }

    /** Reads a cursor; {@link IllegalArgumentException} for text that no page gave. */
    public static ListCursor decode(String text) {
        try {
            Document doc = Document.parse(new String(Base64.getUrlDecoder().decode(text), StandardCharsets.UTF_8));
            if (doc.get("t") instanceof Long millis && doc.get("ids") instanceof List<?> ids && doc.size() == 2) {
                return new ListCursor(millis, List.copyOf(ids), 0);
            }
            if (doc.get("n") instanceof Integer n && n >= 0 && doc.size() == 1) {
                return new ListCursor(null, List.of(), n);
            }
        } catch (RuntimeException e) {
            // not base64, not JSON, or an id that cannot be read: the same answer as a wrong shape
        }
        throw new IllegalArgumentException("'" + (text.length() > 60 ? text.substring(0, 60) + "..." : text)
                + "' is not a page cursor: pass the \"next\" of the page before");
    }
}
