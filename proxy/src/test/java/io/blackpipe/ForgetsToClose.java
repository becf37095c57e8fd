package io.blackpipe;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.testing.ScriptedMongod;
import org.bson.Document;

/**
 * A program that starts a proxy, sends a command through it and returns from main without closing
 * it: {@link ForgottenCloseTest} runs it as a child JVM, which must exit.
 */
public final class ForgetsToClose {
    private ForgetsToClose() {
    }

    public static void main(String[] args) throws Exception {
        ScriptedMongod member = ScriptedMongod.start();
        BlackPipe blackPipe = BlackPipe.start(member.uri());
        try (MongoClient client = MongoClients.create(blackPipe.connectionString())) {
            Document pong = client.getDatabase("admin").runCommand(new Document("ping", 1));
            System.out.println("through the proxy: " + pong.toJson());
        }
        System.out.println("main returns, the proxy left open");
    }
}
