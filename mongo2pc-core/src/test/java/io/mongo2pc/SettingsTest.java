package io.mongo2pc;

import io.mongo2pc.testkit.EmbeddedMongo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SettingsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private TransactionManagerBuilder builder() {
        return TransactionManager.builder().target("default", mongo.client()).database(mongo.database());
    }

    @Test
    void maxClockSkew_moreThanHalfTheLease_isRefusedWithBothValues() {
        // Regression: it was lowered to half the lease without a word, weakening what the user asked for.
        assertThatThrownBy(() -> builder().lease(Duration.ofSeconds(1)).maxClockSkew(Duration.ofMillis(501)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxClockSkew 501ms").hasMessageContaining("lease 1000ms");
    }

    @Test
    void maxClockSkew_default_isOneSecondOrHalfAShorterLease() {
        assertThat(builder().build().settings().maxClockSkew()).isEqualTo(Duration.ofSeconds(1));
        assertThat(builder().lease(Duration.ofMillis(800)).build().settings().maxClockSkew()).isEqualTo(Duration.ofMillis(400));
        assertThat(builder().lease(Duration.ofSeconds(2)).maxClockSkew(Duration.ofSeconds(1)).build().settings().maxClockSkew())
                .isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void finishLinger_isABuilderSettingWithItsDefault_andOutOfRangeValuesAreRefusedWithTheValue() {
        assertThat(builder().build().settings().finishLinger()).isEqualTo(Duration.ofMillis(5));
        assertThat(builder().finishLinger(Duration.ZERO).build().settings().finishLinger()).isEqualTo(Duration.ZERO);
        assertThatThrownBy(() -> builder().finishLinger(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("finishLinger").hasMessageContaining("PT-0.001S");
        assertThatThrownBy(() -> builder().finishLinger(Duration.ofSeconds(11)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("between 0 and 10s");
    }
}
