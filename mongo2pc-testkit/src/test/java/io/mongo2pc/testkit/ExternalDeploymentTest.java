package io.mongo2pc.testkit;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.mongo2pc.embedded.EmbeddedServer;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The switch to a deployment of the user's ({@code -Dmongo2pc.test.uri}, {@code -Dmongo2pc.test.uri2}),
 * pointed at two servers started apart from the extension (real servers over TCP): the tests use
 * them, each in databases of its own, one extension of the class on each deployment,
 * and a finished test's databases are dropped.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ExternalDeploymentTest {
    private static final EmbeddedServer DEPLOYMENT = EmbeddedServer.inMemory().start();
    private static final EmbeddedServer SECOND_DEPLOYMENT = EmbeddedServer.inMemory().start();
    private static final List<String> USED = new ArrayList<>();

    @RegisterExtension
    static EmbeddedMongo first = EmbeddedMongo.external(DEPLOYMENT.uri(), SECOND_DEPLOYMENT.uri());
    @RegisterExtension
    static EmbeddedMongo second = EmbeddedMongo.external(DEPLOYMENT.uri(), SECOND_DEPLOYMENT.uri());

    @AfterAll
    static void stopDeployments() {
        DEPLOYMENT.close();
        SECOND_DEPLOYMENT.close();
    }

    private static List<String> databasesOf(EmbeddedServer deployment) {
        try (MongoClient direct = MongoClients.create(deployment.uri())) {
            return direct.listDatabaseNames().into(new ArrayList<>());
        }
    }

    @Test
    @Order(1)
    void tests_runOnTheGivenDeployments_inDatabasesOfTheirOwn() {
        assertThat(first.isExternal()).isTrue();
        assertThat(List.of(first.uri(), second.uri())).as("one extension on each deployment")
                .containsExactlyInAnyOrder(DEPLOYMENT.uri(), SECOND_DEPLOYMENT.uri());
        assertThat(first.database()).matches("t[0-9a-z]+_[0-9]+_tests_runOnTheGiven.*").isNotEqualTo(second.database());
        EmbeddedServer firstDeployment = first.uri().equals(DEPLOYMENT.uri()) ? DEPLOYMENT : SECOND_DEPLOYMENT;
        EmbeddedServer secondDeployment = firstDeployment == DEPLOYMENT ? SECOND_DEPLOYMENT : DEPLOYMENT;

        first.client().getDatabase(first.database()).getCollection("accounts").insertOne(new Document("_id", "A").append("balance", 5L));
        first.newClient().getDatabase(first.database() + "_shop").getCollection("orders").insertOne(new Document("_id", "o1"));
        second.client().getDatabase(second.database()).getCollection("accounts").insertOne(new Document("_id", "B").append("balance", 1L));

        assertThat(databasesOf(firstDeployment)).contains(first.database(), first.database() + "_shop").doesNotContain(second.database());
        assertThat(databasesOf(secondDeployment)).contains(second.database());
        USED.addAll(List.of(first.database(), first.database() + "_shop", second.database()));
    }

    @Test
    @Order(2)
    void aFinishedTestsDatabases_areDropped_andTheInvariantsReadTheDeployment() {
        assertThat(USED).as("the first test ran").hasSize(3);
        assertThat(databasesOf(DEPLOYMENT)).doesNotContainAnyElementsOf(USED);
        assertThat(databasesOf(SECOND_DEPLOYMENT)).doesNotContainAnyElementsOf(USED);

        first.client().getDatabase(first.database()).getCollection("accounts").insertOne(new Document("_id", "C").append("balance", -1L));
        assertThat(first.invariants().violations()).singleElement().asString().contains("account C is negative");
        first.client().getDatabase(first.database()).getCollection("accounts").deleteOne(new Document("_id", "C"));
    }
}
