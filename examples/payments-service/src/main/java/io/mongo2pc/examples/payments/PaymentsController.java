package io.mongo2pc.examples.payments;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.OutcomeUnknownException;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.bank.Payments;
import org.bson.types.Decimal128;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import java.math.BigDecimal;
import java.util.Map;

/**
 * The service's REST API. Transfers and payments are put under the caller's id
 * ({@code PUT /transfers/{id}}): a client that lost the answer sends the same request again and
 * gets the first one's outcome, never a second payment.
 *
 * <pre>
 * POST /accounts              {"id": "alice", "balance": 100}     201; 400 bad input or existing id
 * GET  /accounts/{id}         {"id", "balance"} as of the last committed transaction; 404
 * PUT  /transfers/{id}        {"from": "alice", "to": "bob", "amount": 30}
 * POST /orders                {"id": "o1", "total": 25}
 * PUT  /orders/{id}/payment   {"account": "alice", "merchant": "shop"}
 * </pre>
 * A transfer or payment answers 200 when committed, 409 when canceled (with the reason and its
 * code, e.g. INSUFFICIENT_FUNDS), 400 for bad input (nothing written), 503 when the outcome is not
 * known yet (send the same request again).
 */
@RestController
public class PaymentsController {
    private final TransactionManager manager;
    private final Bank bank;
    private final Payments payments;

    public PaymentsController(TransactionManager manager, Bank bank, Payments payments) {
        this.manager = manager;
        this.bank = bank;
        this.payments = payments;
    }

    // Amounts arrive as decimals, never as long: JSON's 1.5 read into a long becomes 1, a transfer
    // of money the caller did not ask for. The account decides which amounts it takes (see amount).
    public record NewAccount(String id, BigDecimal balance) { }
    public record Account(String id, Object balance) { }
    public record TransferRequest(String from, String to, BigDecimal amount) { }
    public record NewOrder(String id, BigDecimal total) { }
    public record PaymentRequest(String account, String merchant) { }
    public record Outcome(String id, String state, boolean committed, String reason, String code) {
        static Outcome of(TransactionOutcome o) {
            return new Outcome(String.valueOf(o.id()), o.state().stored(), o.isCommitted(), o.reason(),
                    o.reasonCode() == null ? null : o.reasonCode().name());
        }
    }

    @PostMapping("/accounts")
    public ResponseEntity<Account> openAccount(@RequestBody NewAccount account) {
        bank.createAccount(account.id(), amount("balance", account.balance()));
        return ResponseEntity.status(HttpStatus.CREATED).body(new Account(account.id(), account.balance()));
    }

    @GetMapping("/accounts/{id}")
    public ResponseEntity<Account> readCommitted(@PathVariable String id) {
        DocumentRef ref = DocumentRef.of(manager.settings().database(), Bank.ACCOUNTS, id);
        return manager.readCommitted(ref)
                .map(doc -> ResponseEntity.ok(new Account(id, doc.get("balance"))))
                .orElse(ResponseEntity.notFound().build());
    }

    @PutMapping("/transfers/{id}")
    public ResponseEntity<Outcome> transfer(@PathVariable String id, @RequestBody TransferRequest request) {
        return answer(bank.transfer(id, request.from(), request.to(), amount("amount", request.amount())));
    }

    @PostMapping("/orders")
    public ResponseEntity<Map<String, Object>> createOrder(@RequestBody NewOrder order) {
        if (!(amount("total", order.total()) instanceof Long total)) {
            throw new InvalidTransactionException("total of order " + order.id() + " must be a whole amount, got "
                    + order.total().toPlainString());
        }
        payments.createOrder(order.id(), total);
        return ResponseEntity.status(HttpStatus.CREATED).body(Map.of("id", order.id(), "total", total, "state", "UnPaid"));
    }

    @PutMapping("/orders/{id}/payment")
    public ResponseEntity<Outcome> pay(@PathVariable String id, @RequestBody PaymentRequest request) {
        return answer(payments.pay("payment-" + id, id, request.account(), request.merchant()));
    }

    @GetMapping("/orders/{id}")
    public ResponseEntity<Map<String, Object>> readOrder(@PathVariable String id) {
        return manager.readCommitted(DocumentRef.of(manager.settings().database(), Payments.ORDERS, id))
                .map(doc -> ResponseEntity.ok(Map.<String, Object>of("id", id, "state", doc.getString("state"),
                        "total", doc.get("total"))))
                .orElse(ResponseEntity.notFound().build());
    }

    /**
     * An amount as the library takes it: a whole number as a long, anything finer as a Decimal128,
     * which an account of whole units refuses in its own words (never rounded).
     */
    private static Number amount(String name, BigDecimal value) {
        if (value == null) {
            throw new InvalidTransactionException(name + " is missing");
        }
        BigDecimal stripped = value.stripTrailingZeros();
        if (stripped.scale() <= 0 && stripped.compareTo(LONG_MIN) >= 0 && stripped.compareTo(LONG_MAX) <= 0) {
            return stripped.longValueExact();
        }
        return new Decimal128(value);
    }

    private static final BigDecimal LONG_MIN = BigDecimal.valueOf(Long.MIN_VALUE);
    private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);

    private static ResponseEntity<Outcome> answer(TransactionOutcome outcome) {
        return ResponseEntity.status(outcome.isCommitted() ? HttpStatus.OK : HttpStatus.CONFLICT).body(Outcome.of(outcome));
    }

    @ExceptionHandler(InvalidTransactionException.class)
    public ResponseEntity<Map<String, String>> badInput(InvalidTransactionException e) {
        return ResponseEntity.badRequest().body(Map.of("error", e.getMessage()));
    }

    @ExceptionHandler(OutcomeUnknownException.class)
    public ResponseEntity<Map<String, String>> unknown(OutcomeUnknownException e) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body(Map.of("id", String.valueOf(e.transactionId()),
                "error", "outcome not known yet; send the same request again: " + e.getMessage()));
    }
}
