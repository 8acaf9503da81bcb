package io.mongo2pc.examples.payments.shop;

import io.mongo2pc.spring.Mongo2pcOperations;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Checkout as a Spring developer writes it: read the order, check and take the stock of each line,
 * insert the shipment, mark the order shipped. The method is one mongo2pc transaction: all of it
 * commits or none, serializable on what it read and wrote, and on a conflict with another checkout
 * it runs again from the start, so it never sells stock another checkout took, and no order ships
 * twice. A {@link CheckoutRefused} (a runtime exception) cancels it.
 */
@Service
public class Checkout {
    /** The bean name of mongo2pc's Spring transaction manager (the only one here, so also the default). */
    static final String MONGO2PC = "mongo2pcTransactionManager";

    private final Mongo2pcOperations ops;

    public Checkout(Mongo2pcOperations ops) {
        this.ops = ops;
    }

    @Transactional(transactionManager = MONGO2PC)
    public Shipment checkout(String orderId) {
        Order order = ops.findById(orderId, Order.class).orElseThrow(() ->
                new CheckoutRefused(CheckoutRefused.Code.NO_SUCH_ORDER, "no order " + orderId));
        if (order.state() != Order.State.NEW) {
            throw new CheckoutRefused(CheckoutRefused.Code.ALREADY_SHIPPED, "order " + orderId + " is already shipped, as "
                    + order.shipment());
        }
        for (Order.Line line : order.lines()) {
            // A second line of the same item reads the stock this method already took (read your writes).
            Item item = ops.findById(line.item(), Item.class).orElseThrow(() ->
                    new CheckoutRefused(CheckoutRefused.Code.NO_SUCH_ITEM, "order " + orderId + " wants item " + line.item()
                            + ", which does not exist"));
            if (item.stock() < line.quantity()) {
                throw new CheckoutRefused(CheckoutRefused.Code.OUT_OF_STOCK, "order " + orderId + " wants " + line.quantity()
                        + " of item " + item.id() + ", " + item.stock() + " left");
            }
            ops.save(item.withStock(item.stock() - line.quantity()));
        }
        Shipment shipment = ops.insert(new Shipment(Shipment.idOf(orderId), orderId, order.lines()));
        ops.save(order.shippedAs(shipment.id()));
        return shipment;
    }
}
