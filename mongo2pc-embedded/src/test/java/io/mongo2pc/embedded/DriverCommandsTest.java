package io.mongo2pc.embedded;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The commands that the MongoDB Java driver and Spring Boot send on their own, not asked for by the
 * application: the handshake and monitoring ({@code hello}, {@code isMaster}), Spring Boot's health
 * indicator ({@code hello} on admin), the driver's session cleanup at close ({@code endSessions}),
 * and what tools and indicators ask for ({@code ping}, {@code buildInfo}, {@code serverStatus},
 * {@code listDatabases}). Each must be answered {@code ok: 1}.
 */
class DriverCommandsTest {

    private static EmbeddedServer server;
    private static MongoClient client;

    @BeforeAll
    static void start() {
        server = EmbeddedServer.inMemory().start();
        client = MongoClients.create(server.uri());
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"hello", "isMaster", "ismaster", "ping", "buildInfo", "serverStatus", "listDatabases", "endSessions"})
    void command_sentByTheDriverOrSpringBoot_isAnsweredOk(String command) {
        Object argument = command.equals("endSessions") ? List.of() : (Object) 1;

        Document answer = client.getDatabase("admin").runCommand(new Document(command, argument));

        assertThat(((Number) answer.get("ok")).doubleValue()).as(answer.toJson()).isEqualTo(1.0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"hello", "isMaster"})
    void handshake_saysThisServerIsAWritablePrimaryOfTheDriversWireVersions(String command) {
        Document answer = client.getDatabase("admin").runCommand(new Document(command, 1));

        assertThat(answer.getBoolean(command.equals("hello") ? "isWritablePrimary" : "ismaster")).as(answer.toJson()).isTrue();
        assertThat(((Number) answer.get("maxWireVersion")).intValue()).isGreaterThanOrEqualTo(8);
    }
}
