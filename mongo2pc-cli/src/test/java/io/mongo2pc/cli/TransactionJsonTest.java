package io.mongo2pc.cli;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Operation;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TransactionJsonTest {

    @Test
    void parse_theDesignExample_readsEveryOperation() {
        List<Operation> ops = TransactionJson.parse("""
                {"ops": [
                  {"op": "insert", "target": "default", "db": "shop", "coll": "payments", "doc": {"_id": "p1", "order": "o1", "amount": 30}},
                  {"op": "update", "db": "shop", "coll": "orders", "id": "o1", "update": {"$set": {"state": "Paid"}}, "guard": {"state": "UnPaid"}},
                  {"op": "update", "db": "bank", "coll": "accounts", "id": "A", "update": {"$inc": {"balance": -30}}, "guard": {"balance": {"$gte": 30}}},
                  {"op": "delete", "db": "shop", "coll": "carts", "id": "c9"}
                ]}""");

        assertThat(ops).hasSize(4);
        assertThat(ops.get(0)).isInstanceOf(Operation.Insert.class);
        assertThat(ops.get(0).document()).isEqualTo(new DocumentRef("default", "shop", "payments", "p1"));
        assertThat(ops.get(1)).isInstanceOfSatisfying(Operation.Update.class, u -> assertThat(u.guard()).containsEntry("state", "UnPaid"));
        assertThat(ops.get(3)).isInstanceOf(Operation.Delete.class);
    }

    @Test
    void parse_malformed_isRefusedWithTheOperationAndFieldNamed() {
        assertThatThrownBy(() -> TransactionJson.parse("not json")).isInstanceOf(InvalidTransactionException.class);
        assertThatThrownBy(() -> TransactionJson.parse("{\"ops\": 3}")).hasMessageContaining("\"ops\" as a number, not a list");
        assertThatThrownBy(() -> TransactionJson.parse("{\"ops\": {}}")).hasMessageContaining("\"ops\" as an object, not a list");
        assertThatThrownBy(() -> TransactionJson.parse("{\"ops\": [{\"op\": \"drop\", \"db\": \"a\", \"coll\": \"b\", \"id\": 1}]}"))
                .hasMessageContaining("operation 0").hasMessageContaining("unknown op 'drop'");
        assertThatThrownBy(() -> TransactionJson.parse("{\"ops\": [{\"op\": \"update\", \"db\": \"a\", \"coll\": \"b\", \"update\": {}}]}"))
                .hasMessageContaining("missing \"id\"");
        assertThatThrownBy(() -> TransactionJson.parse("{\"ops\": [{\"op\": \"insert\", \"db\": \"a\", \"coll\": \"b\", \"doc\": {\"x\": 1}}]}"))
                .hasMessageContaining("needs an _id");
        assertThatThrownBy(() -> TransactionJson.parse("{\"ops\": [], \"extra\": 1}")).hasMessageContaining("extra");
        assertThatThrownBy(() -> TransactionJson.parse("{\"ops\": [{\"op\": \"delete\", \"db\": \"a\", \"coll\": \"b\", \"id\": 1, \"where\": 1}]}"))
                .hasMessageContaining("unknown key 'where'");
    }
}
