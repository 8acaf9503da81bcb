package io.mongo2pc.examples.payments.shop;

import org.springframework.data.annotation.Id;
import org.springframework.data.mongodb.core.mapping.Document;

import java.util.List;

/** What leaves the warehouse for one order: its id is the order's, so an order has at most one. */
@Document("shipments")
public record Shipment(@Id String id, String order, List<Order.Line> lines) {

    static String idOf(String orderId) {
        return "shipment-" + orderId;
    }
}
