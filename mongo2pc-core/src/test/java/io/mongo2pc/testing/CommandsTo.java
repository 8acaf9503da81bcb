package io.mongo2pc.testing;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import org.bson.BsonDocument;
import org.bson.BsonValue;

import java.util.function.BiConsumer;

/** A client that shows a test each command it sends to one collection (its name, and the command), to count requests. */
public final class CommandsTo {
    private CommandsTo() {
    }

    public static MongoClient client(String uri, String collection, BiConsumer<String, BsonDocument> seen) {
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        BsonValue target = event.getCommand().get(event.getCommandName());
                        if (target != null && target.isString() && target.asString().getValue().equals(collection)) {
                            seen.accept(event.getCommandName(), event.getCommand());
                        }
                    }
                }).build());
    }
}
