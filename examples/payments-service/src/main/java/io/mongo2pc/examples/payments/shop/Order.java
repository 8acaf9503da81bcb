package io.mongo2pc.examples.payments.shop;

import org.springframework.data.annotation.Id;
import org.springframework.data.mongodb.core.mapping.Document;

import java.util.List;

/** An order of items, shipped at most once. */
@Document("orders")
public record Order(@Id String id, List<Line> lines, State state, String shipment) {

    /** So many of one item (an item may come back on several lines). */
    public record Line(String item, long quantity) { }

    public enum State { NEW, SHIPPED }

    Order shippedAs(String shipmentId) {
        return new Order(id, lines, State.SHIPPED, shipmentId);
    }
}
