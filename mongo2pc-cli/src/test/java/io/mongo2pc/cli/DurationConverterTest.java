package io.mongo2pc.cli;

import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Command-line values read without a server: durations and transaction ids. */
class DurationConverterTest {

    @Test
    void parse_unitsOfTheContract() {
        assertThat(DurationConverter.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(DurationConverter.parse("30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(DurationConverter.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(DurationConverter.parse("5m")).isEqualTo(Duration.ofMinutes(5));
        assertThat(DurationConverter.parse("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(DurationConverter.parse("2d")).isEqualTo(Duration.ofDays(2));
        assertThat(DurationConverter.parse("0")).isZero();
        assertThat(DurationConverter.parse("PT30S")).isEqualTo(Duration.ofSeconds(30));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "30", "-1s", "5 minutes", "abc", "1x", "s", "PT-5S", "99999999999999999999d"})
    void parse_refusesWhatIsNotADuration_namingIt(String text) {
        assertThatThrownBy(() -> DurationConverter.parse(text))
                .isInstanceOf(CommandLine.TypeConversionException.class)
                .hasMessageContaining("'" + text + "'");
    }

    @Test
    void format_roundTrips() {
        for (String text : new String[] {"500ms", "30s", "5m", "1h", "0s"}) {
            assertThat(DurationConverter.format(DurationConverter.parse(text))).isEqualTo(text);
        }
    }

    @Test
    void transactionIds_hexIsAnObjectId_integersAreAlsoTriedAsNumbers() {
        ObjectId oid = new ObjectId();
        assertThat(TransactionIds.candidates(oid.toHexString())).containsExactly(oid);
        assertThat(TransactionIds.candidates("1")).containsExactly("1", 1L);
        assertThat(TransactionIds.candidates("tx-7")).containsExactly("tx-7");
        assertThatThrownBy(() -> TransactionIds.candidates("")).hasMessageContaining("empty");
    }
}
