package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.backend.DefaultQueryMatcher;
import de.bwaldvogel.mongo.bson.Decimal128;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every answer {@link SimpleMatcher} gives must be upstream's: documents and filters shaped like a
 * transaction's (ids, balances, marker arrays, locks, states, deadlines), with values of other
 * types mixed in, and clauses it does not know (which it must leave to upstream).
 */
class SimpleMatcherTest {

    private static final ObjectId OID_1 = new ObjectId();
    private static final ObjectId OID_2 = new ObjectId();
    private static final UUID UUID_1 = UUID.nameUUIDFromBytes(new byte[] {1});
    private static final List<String> FIELDS = List.of("_id", "balance", "pendingTransactions", "_m2pc", "state");
    private final DefaultQueryMatcher upstream = new DefaultQueryMatcher();

    @Property(tries = 5000)
    void matches_transactionShapedFilters_sameAsUpstream(@ForAll("documents") Document document,
                                                         @ForAll("queries") Document query) {
        Boolean ours = SimpleMatcher.matches(document, query);
        Object theirs = upstreamOutcome(document, query);
        if (ours != null) {
            assertThat(ours).as("%s against %s", query, document).isEqualTo(theirs);
        }
    }

    @Property(tries = 500)
    void matches_integerComparisons_sameAsUpstream(@ForAll("integers") Object balance, @ForAll("integers") Object operand,
                                                   @ForAll("comparisons") String operator) {
        Document account = new Document("_id", "A").append("balance", balance);
        Document query = new Document("balance", new Document(operator, operand));
        assertThat(SimpleMatcher.matches(account, query)).as("%s against %s", query, account)
                .isEqualTo(upstream.matches(account, query));
    }

    @Property(tries = 500)
    void matches_integerEquality_sameAsUpstream(@ForAll("integers") Object epoch, @ForAll("integers") Object wanted) {
        Document transaction = new Document("_id", OID_1).append("state", "pending").append("epoch", epoch);
        Document query = new Document("_id", OID_1).append("state", new Document("$in", List.of("pending", "Pending")))
                .append("epoch", wanted);
        assertThat(SimpleMatcher.matches(transaction, query)).as("%s against %s", query, transaction)
                .isEqualTo(upstream.matches(transaction, query));
    }

    @Provide
    Arbitrary<Object> integers() {
        return Arbitraries.oneOf(Arbitraries.integers().between(-2, 2).map(Object.class::cast),
                Arbitraries.longs().between(-2, 2).map(Object.class::cast));
    }

    @Provide
    Arbitrary<String> comparisons() {
        return Arbitraries.of("$gt", "$gte", "$lt", "$lte");
    }

    @Test
    void decimalAgainstAnInteger_comparesByExactValue_notAsDoubles() {
        // Regression (found in review): upstream compares them as doubles, so the guard of a debit of
        // 100.000000000000001 held on a balance of 100 and the account was overdrawn.
        Decimal128 justAbove = new Decimal128(new BigDecimal("100.000000000000001"));
        Document balance = new Document("balance", 100L);
        assertThat(SimpleMatcher.matches(balance, new Document("balance", new Document("$gte", justAbove)))).isFalse();
        assertThat(SimpleMatcher.matches(balance, new Document("balance", new Document("$lt", justAbove)))).isTrue();
        assertThat(SimpleMatcher.matches(balance, new Document("balance", justAbove))).isFalse();
        assertThat(SimpleMatcher.matches(new Document("balance", justAbove), new Document("balance", new Document("$gt", 100L)))).isTrue();
        assertThat(SimpleMatcher.matches(new Document("balance", 9_007_199_254_740_992L),
                new Document("balance", new Document("$gte", new Decimal128(new BigDecimal("9007199254740993")))))).isFalse();
        assertThat(SimpleMatcher.matches(new Document("balance", new Decimal128(new BigDecimal("100.00"))),
                new Document("balance", 100))).isTrue();
        // NaN, infinities and other types are left to upstream
        assertThat(SimpleMatcher.matches(balance, new Document("balance", new Document("$gte", Decimal128.NaN)))).isNull();
        assertThat(SimpleMatcher.matches(new Document("balance", 100.5), new Document("balance", new Document("$gte", justAbove)))).isNull();
    }

    @Test
    void matches_arrayPositionInNonAsciiDigits_isAFieldNameAsForUpstream() {
        Document document = new Document("f", new ArrayList<>(List.of("A", "B", "C", "D")));
        for (String key : List.of("f.\u0663", "f.\uff10")) {
            for (boolean wanted : List.of(true, false)) {
                Document query = new Document(key, new Document("$exists", wanted));
                Boolean ours = SimpleMatcher.matches(document, query);
                if (ours != null) {
                    assertThat(ours).as("%s against %s", query, document).isEqualTo(upstream.matches(document, query));
                }
            }
        }
    }

    @Test
    void matches_theLibrarysApplyFilter_isAnsweredWithoutUpstream() {
        Document account = new Document("_id", "A").append("balance", 100).append("pendingTransactions", new ArrayList<>(List.of(OID_1)));
        Document filter = new Document("_id", "A")
                .append("$expr", new Document("$lt", List.of("$$NOW", Instant.now().plusSeconds(60))))
                .append("pendingTransactions", new Document("$ne", OID_2))
                .append("pendingTransactions.999", new Document("$exists", false))
                .append("balance", new Document("$gte", 30))
                .append("_m2pc", new Document("$exists", false));
        assertThat(SimpleMatcher.matches(account, filter)).isTrue();
        assertThat(upstream.matches(account, filter)).isTrue();
        filter.append("balance", new Document("$gte", 101));
        assertThat(SimpleMatcher.matches(account, filter)).isFalse();
        assertThat(upstream.matches(account, filter)).isFalse();
    }

    private Object upstreamOutcome(Document document, Document query) {
        try {
            return upstream.matches(document, query);
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName();
        }
    }

    @Provide
    Arbitrary<Document> documents() {
        return Arbitraries.maps(Arbitraries.of(FIELDS), value()).ofMaxSize(5).map(SimpleMatcherTest::document);
    }

    @Provide
    Arbitrary<Document> queries() {
        Arbitrary<Tuple.Tuple2<String, Object>> clause = Arbitraries.oneOf(
                Arbitraries.of(FIELDS).flatMap(field -> condition().map(c -> Tuple.of(field, c))),
                Arbitraries.of(0, 1, 2, 999).flatMap(n -> Arbitraries.of(true, false)
                        .map(b -> Tuple.of("pendingTransactions." + n, (Object) new Document("$exists", b)))),
                Arbitraries.of("pendingTransactions.01", "pendingTransactions.x", ".0", "$and",
                                "pendingTransactions.\u0663", "pendingTransactions.\uff10")
                        .map(key -> Tuple.of(key, (Object) new Document("$exists", true))),
                Arbitraries.of(-1, 1).map(days -> Tuple.of("$expr",
                        (Object) new Document("$lt", List.of("$$NOW", Instant.now().plusSeconds(days * 86_400L))))));
        return clause.list().ofMaxSize(4).map(clauses -> {
            Document query = new Document();
            clauses.forEach(c -> query.put(c.get1(), c.get2()));
            return query;
        });
    }

    private static Arbitrary<Object> condition() {
        Arbitrary<Object> plain = Arbitraries.of("A", "B", OID_1, OID_2, UUID_1, true, false);
        return Arbitraries.oneOf(
                plain,
                Arbitraries.of(1, 30L, "30", 1.5).map(Object.class::cast),
                plain.map(v -> (Object) new Document("$ne", v)),
                Arbitraries.of(1, 30L, 2.5, "x").map(v -> (Object) new Document("$ne", v)),
                Arbitraries.of(true, false, 1).map(v -> (Object) new Document("$exists", v)),
                Arbitraries.of("$gt", "$gte", "$lt", "$lte").flatMap(op -> Arbitraries.of(0, 30, 31L, -5L, 30.5, "30")
                        .map(v -> (Object) new Document(op, v))),
                Arbitraries.of(new Document("$gte", 1).append("$lt", 50), new Document("$in", List.of("A", "B")),
                        new Document("$in", List.of(OID_1, true)), new Document("$in", List.of("A", 30)),
                        new Document("$in", List.of()), new Document("$foo", 1)).map(Object.class::cast),
                Arbitraries.of(0, 30, -5, 100, 30L, 31L, Long.MAX_VALUE).map(Object.class::cast));
    }

    private static Arbitrary<Object> value() {
        Arbitrary<Object> scalar = Arbitraries.oneOf(
                Arbitraries.of("A", "B", "", OID_1, OID_2, UUID_1, true, false).map(Object.class::cast),
                Arbitraries.of(0, 30, -5, 100).map(Object.class::cast),
                Arbitraries.of(30L, 31L, Long.MAX_VALUE).map(Object.class::cast),
                Arbitraries.of(30.0, 29.5, Double.NaN).map(Object.class::cast));
        return Arbitraries.oneOf(
                scalar,
                scalar.list().ofMaxSize(4).map(list -> (Object) new ArrayList<>(list)),
                Arbitraries.of(new Document("tx", OID_1), new Document("0", "A")).map(Object.class::cast),
                Arbitraries.just(null));
    }

    private static Document document(java.util.Map<String, Object> fields) {
        Document document = new Document();
        fields.forEach(document::put);
        return document;
    }
}
