package io.mongo2pc;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/**
 * A TCP proxy in front of a MongoDB-compatible server: requests go through unchanged, optionally
 * after an action that changes the data first (a race placed exactly); for the first
 * {@code drops} requests that {@code trigger} accepts, the request is forwarded and answered by the
 * server (so the write is applied), but the reply is dropped and the connection closed: a lost
 * acknowledgement, as the driver sees it after a network failure.
 */
public final class FaultProxy implements AutoCloseable {
    private final ServerSocket server;
    private final ConnectionString target;
    private final String host;
    private final int port;
    private final AtomicInteger drops = new AtomicInteger();
    private volatile Predicate<String> trigger = s -> false;
    public final AtomicInteger dropped = new AtomicInteger();
    private volatile Predicate<String> beforeTrigger = s -> false;
    private final AtomicReference<Runnable> before = new AtomicReference<>();
    private volatile Predicate<String> everyTrigger = s -> false;
    private volatile Runnable every;
    private volatile Predicate<String> countTrigger = s -> false;
    /** How many requests that {@link #countAnswers}'s trigger accepts the server has answered (delivered or not). */
    public final AtomicInteger answered = new AtomicInteger();

    public FaultProxy(String mongoUri) throws IOException {
        // the first host of the URI (on a replica set: give the primary first)
        this.target = new ConnectionString(mongoUri);
        String first = target.getHosts().get(0);
        int colon = first.lastIndexOf(':');
        this.host = colon < 0 ? first : first.substring(0, colon);
        this.port = colon < 0 ? 27017 : Integer.parseInt(first.substring(colon + 1));
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "proxy");
        t.setDaemon(true);
        t.start();
    }

    /**
     * The proxy's URI: one server, reached directly (a replica-set client would otherwise find the
     * members and bypass the proxy), with the target URI's credentials and TLS.
     */
    public String uri() {
        String credentials = target.getUsername() == null ? "" : URLEncoder.encode(target.getUsername(), StandardCharsets.UTF_8)
                + ":" + URLEncoder.encode(new String(target.getPassword()), StandardCharsets.UTF_8) + "@";
        String options = "directConnection=true"
                + (target.getCredential() == null ? "" : "&authSource=" + target.getCredential().getSource())
                + (Boolean.TRUE.equals(target.getSslEnabled()) ? "&tls=true&tlsAllowInvalidHostnames=true" : "");
        return "mongodb://" + credentials + "127.0.0.1:" + server.getLocalPort() + "/?" + options;
    }

    /** A client that reaches the server through this proxy (the caller closes it). */
    public MongoClient newClient() {
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri()))
                .applyToClusterSettings(cluster -> cluster.serverSelectionTimeout(5, TimeUnit.SECONDS)).build());
    }

    /**
     * {@link #newClient()} whose driver gives up on an answer after {@code readTimeoutMs}: a request
     * this proxy holds longer is in doubt for its sender, and reaches the server later, as a late copy.
     */
    public MongoClient newClient(int readTimeoutMs) {
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri()))
                .applyToSocketSettings(s -> s.readTimeout(readTimeoutMs, TimeUnit.MILLISECONDS))
                .applyToClusterSettings(cluster -> cluster.serverSelectionTimeout(5, TimeUnit.SECONDS)).build());
    }

    /** Runs {@code action} once, just before forwarding the next request that {@code trigger} accepts. */
    public void runBefore(Predicate<String> trigger, Runnable action) {
        this.beforeTrigger = trigger;
        this.before.set(action);
    }

    /** Runs {@code action} just before forwarding every request that {@code trigger} accepts, until {@link #stopEvery()}. */
    public void runBeforeEvery(Predicate<String> trigger, Runnable action) {
        this.every = action;
        this.everyTrigger = trigger;
    }

    /** Counts in {@link #answered} the server's answers to requests {@code trigger} accepts, also those the client no longer waits for. */
    public void countAnswers(Predicate<String> trigger) {
        this.countTrigger = trigger;
    }

    public void stopEvery() {
        this.everyTrigger = s -> false;
    }

    /** Drops the replies of the next {@code n} requests whose text (ISO-8859-1 of the bytes) {@code trigger} accepts. */
    public void dropReplies(int n, Predicate<String> trigger) {
        this.trigger = trigger;
        drops.set(n);
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Thread t = new Thread(() -> serve(client), "proxy-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket client) {
        try (client; Socket upstream = new Socket(host, port)) {
            DataInputStream fromClient = new DataInputStream(client.getInputStream());
            DataInputStream fromServer = new DataInputStream(upstream.getInputStream());
            OutputStream toServer = upstream.getOutputStream();
            OutputStream toClient = client.getOutputStream();
            while (true) {
                byte[] request = readMessage(fromClient);
                String text = new String(request, StandardCharsets.ISO_8859_1);
                boolean drop = false;
                if (drops.get() > 0 && trigger.test(text) && drops.getAndDecrement() > 0) {
                    drop = true;
                }
                if (before.get() != null && beforeTrigger.test(text)) {
                    Runnable action = before.getAndSet(null);
                    if (action != null) {
                        action.run();
                    }
                }
                if (everyTrigger.test(text)) {
                    every.run();
                }
                toServer.write(request);
                toServer.flush();
                byte[] reply = readMessage(fromServer);
                if (countTrigger.test(text)) {
                    answered.incrementAndGet();
                }
                if (drop) {
                    dropped.incrementAndGet();
                    return; // the write is applied; its acknowledgement never arrives
                }
                toClient.write(reply);
                toClient.flush();
            }
        } catch (IOException e) {
            // connection closed
        }
    }

    private static byte[] readMessage(DataInputStream in) throws IOException {
        byte[] header = new byte[4];
        in.readFully(header);
        int length = (header[0] & 0xff) | (header[1] & 0xff) << 8 | (header[2] & 0xff) << 16 | (header[3] & 0xff) << 24;
        byte[] message = new byte[length];
        System.arraycopy(header, 0, message, 0, 4);
        in.readFully(message, 4, length - 4);
        return message;
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
