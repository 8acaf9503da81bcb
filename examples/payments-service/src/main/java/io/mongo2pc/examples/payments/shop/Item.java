package io.mongo2pc.examples.payments.shop;

import org.springframework.data.annotation.Id;
import org.springframework.data.mongodb.core.mapping.Document;

/** An item for sale and how many are left. */
@Document("items")
public record Item(@Id String id, String name, long stock) {

    Item withStock(long newStock) {
        return new Item(id, name, newStock);
    }
}
