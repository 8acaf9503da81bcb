package io.mongo2pc.bank;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testing.LibraryFields;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Guarantee 9: bad input is refused with a clear error before anything is written. Every test
 * checks, after the refusal, that the transactions collection is still empty and every account
 * is exactly as it was.
 */
class BadInputTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    TransactionManager manager;
    Bank bank;
    Map<Object, Object> before;

    @BeforeEach
    void setUp() {
        manager = Bank.configure(TransactionManager.builder().finishInBackground(false).target("default", mongo.client()).database(mongo.database())
                .maxOperations(3)).build();
        bank = new Bank(manager);
        bank.createAccount("A", 1000L);
        bank.createAccount("B", 1000L);
        bank.createAccount("C", 1000L);
        bank.createAccount("D", 1000L);
        mongo.invariants().expectTotal(mongo.database(), 4000L);
        before = snapshot();
    }

    @AfterEach
    void nothingWritten() {
        assertThat(mongo.transactions(manager.settings().database()).countDocuments()).as("transactions written").isZero();
        assertThat(snapshot()).as("accounts after a refused input").isEqualTo(before);
    }

    private Map<Object, Object> snapshot() {
        Map<Object, Object> accounts = new TreeMap<>();
        bank.accounts().find().forEach(d -> accounts.put(String.valueOf(d.get("_id")), d.toJson()));
        return accounts;
    }

    private DocumentRef account(Object id) {
        return DocumentRef.of(mongo.database(), "accounts", id);
    }

    // ---- transfer amounts --------------------------------------------------------------------

    @Test
    void transfer_zeroAmount_isRefused() {
        assertThatThrownBy(() -> bank.transfer("A", "B", 0L))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("greater than zero").hasMessageContaining("0");
        assertThatThrownBy(() -> bank.submit("A", "B", 0))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("greater than zero");
    }

    @Test
    void transfer_negativeAmount_isRefused() {
        assertThatThrownBy(() -> bank.transfer("A", "B", -5L))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("greater than zero").hasMessageContaining("-5");
        assertThatThrownBy(() -> bank.transfer("A", "B", new Decimal128(new java.math.BigDecimal("-0.01"))))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("greater than zero");
    }

    @Test
    void transfer_doubleAmount_isRefused() {
        assertThatThrownBy(() -> bank.transfer("A", "B", 10.5))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("Decimal128").hasMessageContaining("10.5");
    }

    @Test
    void transfer_nullAmount_isRefused() {
        assertThatThrownBy(() -> bank.transfer("A", "B", null))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("got null");
    }

    @Test
    void transfer_nanOrInfiniteDecimalAmount_isRefused() {
        assertThatThrownBy(() -> bank.transfer("A", "B", Decimal128.NaN))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("finite");
        assertThatThrownBy(() -> bank.transfer("A", "B", Decimal128.POSITIVE_INFINITY))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("finite");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-5", "abc", "1e3", "", " ", "99999999999999999999", "12.", "0x10", "1,000", "NaN"})
    void amountsParse_badText_isRefusedByParseOrTransfer(String text) {
        assertThatThrownBy(() -> bank.transfer("A", "B", Amounts.parse(text)))
                .isInstanceOf(InvalidTransactionException.class)
                .message().satisfiesAnyOf(
                        m -> assertThat(m).contains("greater than zero"),
                        m -> assertThat(m).contains("is not a number").contains(text),
                        m -> assertThat(m).contains("amount is missing"),
                        m -> assertThat(m).contains("does not fit in a 64-bit integer"));
    }

    @Test
    void amountsParse_beyondDecimal128sExponentRange_isRefusedAsBadInput() {
        // Regression (found in review): a NumberFormatException escaped (the CLI said exit 1, not 2)
        String tiny = "0." + "0".repeat(6200) + "1";
        assertThatThrownBy(() -> Amounts.parse(tiny)).isInstanceOf(InvalidTransactionException.class)
                .hasMessageContaining("out of Decimal128's range").hasMessageContaining("6203 characters");
    }

    @Test
    void amountsParse_goodText_givesLongOrDecimal() {
        assertThat(Amounts.parse("100")).isEqualTo(100L);
        assertThat(Amounts.parse(" 12.50 ")).isEqualTo(new Decimal128(new java.math.BigDecimal("12.50")));
        assertThat(Amounts.parse(String.valueOf(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
    }

    // ---- transfer accounts ---------------------------------------------------------------------

    @Test
    void transfer_sameAccountTwice_isRefused() {
        assertThatThrownBy(() -> bank.transfer("A", "A", 10L))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("same account").hasMessageContaining("A");
    }

    @Test
    void transfer_unknownSourceOrDestination_isRefused() {
        assertThatThrownBy(() -> bank.transfer("Z", "B", 10L))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("account Z does not exist");
        assertThatThrownBy(() -> bank.transfer("A", "Y", 10L))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("account Y does not exist");
        assertThatThrownBy(() -> bank.submit("A", "Y", 10L))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("account Y does not exist");
    }

    @Test
    void transfer_idsThatAreNotPlainValues_areRefused() {
        List<Object> badIds = new ArrayList<>();
        badIds.add(null);
        badIds.add(new Document("$gt", ""));
        badIds.add(new Document("$ne", null));
        badIds.add(List.of("A", "B"));
        badIds.add("");
        badIds.add(1.5); // a whole double (the mongo shell's 1) is an id like 1
        badIds.add(new Decimal128(1));
        badIds.add(true);
        for (Object bad : badIds) {
            assertThatThrownBy(() -> bank.transfer(bad, "B", 10L)).as("source %s", bad)
                    .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("source account");
            assertThatThrownBy(() -> bank.transfer("A", bad, 10L)).as("destination %s", bad)
                    .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("destination account");
            assertThatThrownBy(() -> bank.submit(bad, "B", 10L)).as("submit source %s", bad)
                    .isInstanceOf(InvalidTransactionException.class);
        }
        assertThatThrownBy(() -> bank.transfer(new Document("$gt", ""), "B", 10L))
                .hasMessageContaining("must be a string, an integer or an ObjectId").hasMessageContaining("$gt");
        assertThatThrownBy(() -> bank.transfer("", "B", 10L)).hasMessageContaining("must not be empty");
    }

    // ---- account creation ------------------------------------------------------------------------

    @Test
    void createAccount_negativeBalance_isRefused() {
        assertThatThrownBy(() -> bank.createAccount("N", -1L))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("must not be negative").hasMessageContaining("N");
    }

    @Test
    void createAccount_duplicateId_isRefused() {
        assertThatThrownBy(() -> bank.createAccount("A", 5L))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("account A already exists");
    }

    @Test
    void createAccount_badIdOrBalance_isRefused() {
        assertThatThrownBy(() -> bank.createAccount(new Document("$gt", ""), 5L))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("$gt");
        assertThatThrownBy(() -> bank.createAccount(null, 5L)).isInstanceOf(InvalidTransactionException.class);
        assertThatThrownBy(() -> bank.createAccount("", 5L)).isInstanceOf(InvalidTransactionException.class);
        assertThatThrownBy(() -> bank.createAccount(List.of("x"), 5L)).isInstanceOf(InvalidTransactionException.class);
        assertThatThrownBy(() -> bank.createAccount("E", 5.5)).isInstanceOf(InvalidTransactionException.class)
                .hasMessageContaining("integer or a Decimal128");
        assertThatThrownBy(() -> bank.createAccount("E", null)).isInstanceOf(InvalidTransactionException.class);
    }

    // ---- generic operations through TransactionManager.run ---------------------------------------

    private void refused(List<Operation> ops, String... messageParts) {
        assertThatThrownBy(() -> manager.run(ops)).isInstanceOf(InvalidTransactionException.class)
                .message().contains(messageParts);
        assertThatThrownBy(() -> manager.submit(ops)).isInstanceOf(InvalidTransactionException.class)
                .message().contains(messageParts);
    }

    private Operation inc(Object id, String field, Number amount, Document guard) {
        return Operation.increment(account(id), field, amount, guard);
    }

    @Test
    void run_operationsOverFourMebibytes_areRefused_inUnicodeToo() {
        // 1.5M three-byte characters: 4.5 MB as BSON, though only 1.5M UTF-16 units.
        String big = "\u20ac".repeat(1_500_000);
        refused(List.of(Operation.insert(DocumentRef.of(mongo.database(), "things", "big"), new Document("text", big))),
                "at most 4194304 bytes of operations");
        refused(List.of(inc("A", "balance", -1L, new Document("note", new Document("$ne", big)))),
                "at most 4194304 bytes of operations");
    }

    @Test
    void run_emptyOrNullList_isRefused() {
        refused(List.of(), "at least one operation");
        assertThatThrownBy(() -> manager.run(null)).isInstanceOf(InvalidTransactionException.class)
                .hasMessageContaining("at least one operation");
    }

    @Test
    void run_moreOperationsThanMaxOperations_isRefused() {
        refused(List.of(inc("A", "balance", -1L, null), inc("B", "balance", 1L, null),
                inc("C", "balance", -1L, null), inc("D", "balance", 1L, null)), "at most 3 operations", "got 4");
    }

    @Test
    void run_unknownTarget_isRefused() {
        refused(List.of(new Operation.Increment(new DocumentRef("elsewhere", mongo.database(), "accounts", "A"),
                new Document("balance", 1L), null)), "unknown target 'elsewhere'");
    }

    @Test
    void run_codeOrExpressionGuards_areRefused() {
        for (String operator : List.of("$where", "$function", "$expr", "$jsonSchema", "$text", "$accumulator")) {
            refused(List.of(inc("A", "balance", -1L, new Document(operator, "true"))),
                    "guard operator '" + operator + "' is not allowed");
            // Hidden one level down, inside an allowed operator.
            refused(List.of(inc("A", "balance", -1L, new Document("$and", List.of(new Document(operator, "true"))))),
                    "guard operator '" + operator + "' is not allowed");
            refused(List.of(inc("A", "balance", -1L, new Document("balance", new Document("$not", new Document(operator, "x"))))),
                    "guard operator '" + operator + "' is not allowed");
        }
    }

    @Test
    void run_guardOnMarkers_isRefused() {
        refused(List.of(inc("A", "balance", -1L, new Document("pendingTransactions", new Document("$size", 0)))),
                "reserved field 'pendingTransactions'");
    }

    @Test
    void run_incrementOfReservedFields_isRefused() {
        refused(List.of(inc("A", "pendingTransactions", 1L, null)), "'pendingTransactions' is reserved");
        refused(List.of(inc("A", "pendingTransactions.0", 1L, null)), "'pendingTransactions.0' is reserved");
        refused(List.of(inc("A", "_id", 1L, null)), "'_id' is reserved");
        refused(List.of(inc("A", "_m2pc", 1L, null)), "'_m2pc' is reserved");
    }

    @Test
    void operationsOnTheTwoRoundCommitsEntries_areRefused() {
        // An entry (a field named _m2pc_ and the transaction's id) holds what a prepare took: nobody else may touch it.
        refused(List.of(inc("A", "_m2pc_st-1", 1L, null)), "'_m2pc_st-1' is reserved");
        refused(List.of(inc("A", "_m2pc_st-1.d", 1L, null)), "'_m2pc_st-1.d' is reserved");
        refused(List.of(inc("A", "balance", -1L, new Document("_m2pc_st-1", new Document("$exists", false)))),
                "reserved field '_m2pc_st-1'");
        refused(List.of(Operation.update(account("A"), new Document("$unset", new Document("_m2pc_st-1", "")), null)),
                "'_m2pc_st-1' is reserved");
        refused(List.of(Operation.insert(DocumentRef.of(mongo.database(), "things", "x"), new Document("_m2pc_sx", 1))),
                "'_m2pc_sx' is reserved");
    }

    @Test
    void run_fieldNamesThatAreOperatorsOrBadPaths_areRefused() {
        for (String field : List.of("$inc", "$set", "balance.$", "balance.$[]", "", ".balance", "balance.", "a..b")) {
            refused(List.of(inc("A", field, 1L, null)), "invalid field name '" + field + "'");
        }
    }

    @Test
    void run_amountsThatCannotBeUndoneOrAreNotNumbers_areRefused() {
        refused(List.of(inc("A", "balance", Long.MIN_VALUE, null)), "cannot be undone");
        refused(List.of(inc("A", "balance", Integer.MIN_VALUE, null)), "cannot be undone");
        refused(List.of(inc("A", "balance", Decimal128.NaN, null)), "must be finite");
        refused(List.of(inc("A", "balance", Decimal128.NEGATIVE_INFINITY, null)), "must be finite");
        refused(List.of(inc("A", "balance", Double.NaN, null)), "must be finite");
        refused(List.of(inc("A", "balance", 0L, null)), "must not be zero");
        refused(List.of(new Operation.Increment(account("A"), new Document("balance", null), null)), "must be a number");
        refused(List.of(new Operation.Increment(account("A"), new Document("balance", new java.math.BigDecimal("1")), null)),
                "must be a number");
        refused(List.of(new Operation.Increment(account("A"), new Document(), null)), "at least one field");
    }

    /** Regression: Decimal128 negative zero escaped as an ArithmeticException from BigDecimal conversion. */
    @Test
    void negativeZeroDecimal128Amount_isRefusedAsZeroNotArithmeticException() {
        refused(List.of(inc("A", "balance", Decimal128.NEGATIVE_ZERO, null)), "must not be zero");
        assertThatThrownBy(() -> bank.transfer("A", "B", Decimal128.NEGATIVE_ZERO))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("greater than zero");
        assertThatThrownBy(() -> bank.createAccount("E", Decimal128.NaN))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("finite");
        bank.createAccount("E", Decimal128.NEGATIVE_ZERO); // a zero balance is allowed, and must not crash
        bank.accounts().deleteOne(new Document("_id", "E"));
    }

    @Test
    void run_sameDocumentTwice_isRefused() {
        refused(List.of(inc("A", "balance", -1L, null), inc("A", "balance", 1L, null)), "same document appears twice");
    }

    @Test
    void run_sameNumericIdAsIntAndLong_isRefusedAsTheSameDocument() {
        refused(List.of(inc(7, "balance", -1L, null), inc(7L, "balance", 1L, null)), "same document appears twice");
    }

    @Test
    void run_sameNumericIdAsIntAndWholeDouble_isRefusedAsTheSameDocument() {
        refused(List.of(inc(7, "balance", -1L, null), inc(7.0, "balance", 1L, null)), "same document appears twice");
    }

    @Test
    void run_idsThatSmuggleOperators_areRefused() {
        refused(List.of(inc(new Document("$gt", ""), "balance", -1L, null), inc("B", "balance", 1L, null)),
                "id must be a string, an integer or an ObjectId", "$gt");
        refused(List.of(inc(null, "balance", 1L, null)), "id must be", "null");
        refused(List.of(inc(1.5, "balance", 1L, null)), "id must be", "got 1.5 (a double)");
        refused(List.of(inc(List.of("A"), "balance", 1L, null)), "id must be");
        refused(List.of(inc("", "balance", 1L, null)), "must not be empty");
    }

    /**
     * Regression: a user operation could change the coordinator's own documents, e.g. raise the
     * value of a pending transfer (which recovery reads back) or bump another transaction's epoch.
     */
    @Test
    void run_operationOnTheCoordinatorsOwnCollections_isRefused() {
        refused(List.of(new Operation.Increment(DocumentRef.of(mongo.database(), "transactions", "t1"), new Document("value", 1000L), null)),
                "transactions", "coordinator");
        refused(List.of(new Operation.Increment(DocumentRef.of(mongo.database(), "transactions_clock", "mongo2pc-clock"),
                new Document("n", 1L), null)), "coordinator");
    }

    @Test
    void run_badDatabaseOrCollectionNames_areRefused() {
        refused(List.of(new Operation.Increment(new DocumentRef("default", "a$b", "accounts", "A"), new Document("balance", 1L), null)),
                "invalid database name 'a$b'");
        refused(List.of(new Operation.Increment(new DocumentRef("default", mongo.database(), "acc$ounts", "A"),
                new Document("balance", 1L), null)), "invalid collection name 'acc$ounts'");
    }

    @Test
    void run_goodOperations_afterAllRefusals_stillWork() {
        // The same manager keeps working; and this test also proves the checks above are not vacuous.
        TransactionOutcome outcome = manager.run(List.of(inc("A", "balance", -10L, new Document("balance", new Document("$gte", 10L))),
                inc("B", "balance", 10L, null)));
        assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
        mongo.transactions(manager.settings().database()).deleteMany(new Document());
        // Back as set up, the version the commit counted on each account too (the check after each test compares all fields).
        Document unsetVersion = new Document(LibraryFields.VERSION, "");
        bank.accounts().updateOne(new Document("_id", "A"), new Document("$inc", new Document("balance", 10L)).append("$unset", unsetVersion));
        bank.accounts().updateOne(new Document("_id", "B"), new Document("$inc", new Document("balance", -10L)).append("$unset", unsetVersion));
    }
}
