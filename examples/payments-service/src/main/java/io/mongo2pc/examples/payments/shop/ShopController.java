package io.mongo2pc.examples.payments.shop;

import io.mongo2pc.spring.Mongo2pcConflictException;
import io.mongo2pc.spring.Mongo2pcOperations;
import io.mongo2pc.spring.Mongo2pcOutcomeUnknownException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The shop's REST API: items with their stock, orders of items, and checkout
 * ({@link Checkout}, one {@code @Transactional} method on mongo2pc).
 *
 * <pre>
 * POST /shop/items                {"id": "lamp", "name": "Desk lamp", "stock": 3}         201; 400
 * GET  /shop/items/{id}           the item as of the last commit; 404
 * POST /shop/orders               {"id": "o1", "lines": [{"item": "lamp", "quantity": 1}]} 201; 400
 * GET  /shop/orders/{id}          the order as of the last commit; 404
 * POST /shop/orders/{id}/checkout the shipment; 404 no such order; 409 out of stock, already shipped
 * </pre>
 */
@RestController
@RequestMapping("/shop")
public class ShopController {
    private final Checkout checkout;
    private final Mongo2pcOperations ops;

    public ShopController(Checkout checkout, Mongo2pcOperations ops) {
        this.checkout = checkout;
        this.ops = ops;
    }

    // Counts arrive as decimals and are checked whole: JSON's 1.5 read into a long would become 1.
    public record NewItem(String id, String name, BigDecimal stock) { }
    public record NewLine(String item, BigDecimal quantity) { }
    public record NewOrder(String id, List<NewLine> lines) { }

    @PostMapping("/items")
    public ResponseEntity<Item> addItem(@RequestBody NewItem item) {
        Item added = ops.insert(new Item(required("id", item.id()), item.name(), whole("stock", item.stock(), 0)));
        return ResponseEntity.status(HttpStatus.CREATED).body(added);
    }

    @GetMapping("/items/{id}")
    public ResponseEntity<Item> item(@PathVariable String id) {
        return ResponseEntity.of(ops.findById(id, Item.class));
    }

    @PostMapping("/orders")
    public ResponseEntity<Order> placeOrder(@RequestBody NewOrder order) {
        String id = required("id", order.id());
        if (order.lines() == null || order.lines().isEmpty()) {
            throw new IllegalArgumentException("order " + id + " has no lines");
        }
        List<Order.Line> lines = new ArrayList<>();
        for (NewLine line : order.lines()) {
            lines.add(new Order.Line(required("item", line.item()), whole("quantity", line.quantity(), 1)));
        }
        Order placed = ops.insert(new Order(id, lines, Order.State.NEW, null));
        return ResponseEntity.status(HttpStatus.CREATED).body(placed);
    }

    @GetMapping("/orders/{id}")
    public ResponseEntity<Order> order(@PathVariable String id) {
        return ResponseEntity.of(ops.findById(id, Order.class));
    }

    @PostMapping("/orders/{id}/checkout")
    public Shipment checkout(@PathVariable String id) {
        return checkout.checkout(id);
    }

    private static String required(String name, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(name + " is missing");
        }
        return value;
    }

    private static long whole(String name, BigDecimal value, long least) {
        if (value == null) {
            throw new IllegalArgumentException(name + " is missing");
        }
        BigDecimal stripped = value.stripTrailingZeros();
        if (stripped.scale() > 0 || stripped.compareTo(BigDecimal.valueOf(least)) < 0
                || stripped.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException(name + " must be a whole number of at least " + least + ", got "
                    + value.toPlainString());
        }
        return stripped.longValueExact();
    }

    @ExceptionHandler(CheckoutRefused.class)
    public ResponseEntity<Map<String, String>> refused(CheckoutRefused e) {
        HttpStatus status = e.code() == CheckoutRefused.Code.NO_SUCH_ORDER ? HttpStatus.NOT_FOUND : HttpStatus.CONFLICT;
        return ResponseEntity.status(status).body(Map.of("error", e.getMessage(), "code", e.code().name()));
    }

    @ExceptionHandler({IllegalArgumentException.class, DuplicateKeyException.class})
    public ResponseEntity<Map<String, String>> badInput(RuntimeException e) {
        return ResponseEntity.badRequest().body(Map.of("error", e.getMessage()));
    }

    /** Conflicts with other checkouts outlasted the method's timeout: nothing was written; send it again. */
    @ExceptionHandler(Mongo2pcConflictException.class)
    public ResponseEntity<Map<String, String>> busy(Mongo2pcConflictException e) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).header("Retry-After", "1")
                .body(Map.of("error", "too many checkouts of the same items at once; nothing was done, send it again"));
    }

    @ExceptionHandler(Mongo2pcOutcomeUnknownException.class)
    public ResponseEntity<Map<String, String>> unknown(Mongo2pcOutcomeUnknownException e) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body(Map.of("id", String.valueOf(e.transactionId()),
                "error", "the database could not be reached to know whether the checkout was done; read the order to see"));
    }
}
