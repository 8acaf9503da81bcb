package io.mongo2pc.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The last check of a message: Java's words go, the user's stay. */
class WordsTest {
    @Test
    void javaClassNamesAndDurations_become_plainWords() {
        assertThat(Words.plain("no server answered (java.net.ConnectException: Connection refused)"))
                .isEqualTo("no server answered (Connection refused)");
        assertThat(Words.plain("not a JSON object: org.bson.BsonInvalidOperationException: readStartDocument"))
                .isEqualTo("not a JSON object: readStartDocument");
        assertThat(Words.plain("IllegalStateException: lease must be positive, got PT0.5S")).isEqualTo("lease must be positive, got 500ms");
        assertThat(Words.plain(null)).contains("MONGO2PC_DEBUG");
    }

    @Test
    void theUsersOwnNames_stay() {
        String message = "operation 0 on default/shop.Orders/o1: guard does not hold on db.MyError (collection a.B)";

        assertThat(Words.plain(message)).isEqualTo(message);
    }
}
