package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.mongodb.MongoException;
import io.mongo2pc.TransactionException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The console's web server (Jetty, no servlets): the page at {@code /} and the JSON API under
 * {@code /api/}. Safety: with a token, every request must carry it in the {@code X-Mongo2pc-Token}
 * header (401 otherwise; the page itself, which holds no data, comes with the 401 so a person can
 * type the token); actions are POST only and always need that header, which a cross-site page
 * cannot send (the console never answers CORS preflights); a POST whose {@code Origin} is another
 * site is refused; on a loopback address only requests for a loopback host name are answered
 * (a web page that renames itself to 127.0.0.1, DNS rebinding, gets 403).
 */
final class ConsoleServer implements AutoCloseable {
    static final String TOKEN_HEADER = "X-Mongo2pc-Token";
    private static final Logger log = LoggerFactory.getLogger(ConsoleServer.class);
    private static final Set<String> LOOPBACK_NAMES = Set.of("127.0.0.1", "localhost", "[::1]", "::1");

    private final ConsoleApi api;
    private final ConsolePage page;
    /** Each token's name, by its secret; empty: no token (127.0.0.1 only). */
    private final Map<String, byte[]> tokens;
    private final boolean loopback;
    private final Server server;
    private final ServerConnector connector;

    /** {@code tokens}: each token's secret by its name (empty: none, loopback only). */
    ConsoleServer(ConsoleApi api, ConsolePage page, String bind, int port, Map<String, String> tokens, boolean loopback) {
        this.api = api;
        this.page = page;
        this.tokens = new LinkedHashMap<>();
        tokens.forEach((name, secret) -> this.tokens.put(name, secret.getBytes(StandardCharsets.UTF_8)));
        this.loopback = loopback;
        QueuedThreadPool threads = new QueuedThreadPool(16, 2);
        threads.setName("mongo2pc-console");
        threads.setDaemon(true);
        this.server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendDateHeader(false);
        // A transaction id may hold '/', '%' or ';': the page percent-encodes it as one path segment,
        // and route() splits the raw path before decoding each segment.
        http.setUriCompliance(UriCompliance.DEFAULT.with("transaction ids", UriCompliance.Violation.AMBIGUOUS_PATH_SEPARATOR,
                UriCompliance.Violation.AMBIGUOUS_PATH_ENCODING, UriCompliance.Violation.AMBIGUOUS_PATH_PARAMETER,
                UriCompliance.Violation.AMBIGUOUS_PATH_SEGMENT, UriCompliance.Violation.AMBIGUOUS_EMPTY_SEGMENT));
        this.connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
        connector.setHost(bind);
        connector.setPort(port);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                serve(request, response, callback);
                return true;
            }
        });
    }

    /** Starts listening; throws if the address cannot be bound. */
    ConsoleServer start() throws Exception {
        server.start();
        return this;
    }

    int port() {
        return connector.getLocalPort();
    }

    private record Reply(int status, String type, byte[] body) { }

    private void serve(Request request, Response response, Callback callback) {
        Reply reply;
        try {
            reply = route(request);
        } catch (ConsoleError e) {
            reply = error(e.status(), e.code(), e.getMessage());
        } catch (MongoException | TransactionException e) {
            reply = error(503, "DATABASE_UNAVAILABLE", databaseProblem(e));
        } catch (RuntimeException e) {
            log.warn("console request {} {} failed", request.getMethod(), request.getHttpURI().getPath(), e);
            reply = error(500, "INTERNAL", "unexpected error: " + Words.plain(Connection.firstLine(Connection.rootMessage(e))));
        }
        response.setStatus(reply.status());
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, reply.type());
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
        response.getHeaders().put("X-Content-Type-Options", "nosniff");
        response.getHeaders().put("Referrer-Policy", "no-referrer");
        response.getHeaders().put("X-Frame-Options", "DENY");
        response.getHeaders().put("Content-Security-Policy", page.contentSecurityPolicy());
        response.write(true, ByteBuffer.wrap(reply.body()), callback);
    }

    private Reply route(Request request) {
        String rawPath = request.getHttpURI().getPath();
        String path = decode(rawPath);
        String method = request.getMethod();
        if (loopback && !LOOPBACK_NAMES.contains(Request.getServerName(request))) {
            throw new ConsoleError(403, "FORBIDDEN", "this console answers only to 127.0.0.1 and localhost, not to "
                    + Request.getServerName(request));
        }
        String who = who(request.getHeaders().get(TOKEN_HEADER));
        if (who == null) {
            if (path.equals("/") && method.equals("GET")) {
                return new Reply(401, "text/html; charset=utf-8", page.html()); // holds no data: it asks for the token
            }
            throw new ConsoleError(401, "UNAUTHORIZED", "this console needs its token in the " + TOKEN_HEADER + " header");
        }
        if (path.equals("/") || path.equals("/index.html")) {
            requireMethod(method, "GET");
            return new Reply(200, "text/html; charset=utf-8", page.html());
        }
        if (!path.startsWith("/api/")) {
            throw ConsoleError.notFound("no page " + path + " (the console is at /)");
        }
        Fields query = Request.extractQueryParameters(request);
        Function<String, List<String>> params = name -> {
            List<String> values = query.getValues(name);
            return values == null ? List.of() : values;
        };
        Function<String, String> param = name -> params.apply(name).isEmpty() ? null : params.apply(name).get(0);
        String[] parts = rawPath.substring("/api/".length()).split("/", -1);
        for (int i = 0; i < parts.length; i++) {
            parts[i] = decode(parts[i]);
        }
        if (parts.length == 1) {
            switch (parts[0]) {
                case "status" -> { return get(method, api::status); }
                case "metrics" -> { return get(method, () -> api.sampler().series(param.apply("window"))); }
                case "warnings" -> { return get(method, () -> api.sampler().warnings()); }
                case "owners" -> { return get(method, api::owners); }
                case "transactions" -> { return get(method, () -> api.transactions(params)); }
                case "recover" -> { return post(request, () -> api.recover(param.apply("olderThan"), who)); }
                case "prune" -> {
                    // GET counts what a prune would do (nothing written); POST prunes.
                    return method.equals("GET") ? get(method, () -> api.prune(param.apply("olderThan"), true, who))
                            : post(request, () -> api.prune(param.apply("olderThan"), false, who));
                }
                default -> { }
            }
        }
        if (parts.length == 2 && parts[0].equals("transactions") && !parts[1].isEmpty()) {
            return get(method, () -> api.transaction(parts[1]));
        }
        if (parts.length == 3 && parts[0].equals("transactions") && !parts[1].isEmpty() && parts[2].equals("cancel")) {
            return post(request, () -> api.cancel(parts[1], param.apply("reason"), who));
        }
        throw ConsoleError.notFound("no API " + path);
    }

    /** Percent-decodes one path segment ('+' stays a plus: it means a space only in query strings). */
    private static String decode(String segment) {
        try {
            return URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw ConsoleError.badRequest("bad percent-encoding in " + segment);
        }
    }

    /** What went wrong with the database, in words: what the driver's first cause says, without its Java. */
    static String databaseProblem(Throwable e) {
        Throwable cause = e;
        while (!(cause instanceof MongoException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        String why = cause instanceof MongoException mongo ? Connection.why(mongo) : Connection.rootMessage(cause);
        return "cannot read the database: " + Words.plain(why);
    }

    private static Reply get(String method, Supplier<ObjectNode> answer) {
        requireMethod(method, "GET");
        return json(200, answer.get());
    }

    /** Actions: POST only, with the token header (present even without a token) and no other site's Origin. */
    private static Reply post(Request request, Supplier<ObjectNode> action) {
        requireMethod(request.getMethod(), "POST");
        if (request.getHeaders().get(TOKEN_HEADER) == null) {
            throw new ConsoleError(403, "FORBIDDEN", "an action needs the " + TOKEN_HEADER
                    + " header (the console's page sends it; a form of another site cannot)");
        }
        String origin = request.getHeaders().get(HttpHeader.ORIGIN);
        String host = request.getHeaders().get(HttpHeader.HOST);
        if (origin != null && host != null && !origin.equals("http://" + host) && !origin.equals("https://" + host)) {
            throw new ConsoleError(403, "FORBIDDEN", "an action from another site (" + origin + ") is refused");
        }
        return json(200, action.get());
    }

    private static void requireMethod(String method, String allowed) {
        if (!method.equals(allowed)) {
            throw new ConsoleError(405, "METHOD_NOT_ALLOWED", "use " + allowed + " here, not " + method);
        }
    }

    /**
     * Who sends a request carrying {@code given} in the token header: the name of the token it
     * matches (every token is compared, in constant time each), or null if none does; without
     * tokens, the user this console runs as (it answers 127.0.0.1 only: the person at this machine).
     */
    private String who(String given) {
        if (tokens.isEmpty()) {
            return System.getProperty("user.name", "localhost");
        }
        byte[] bytes = given == null ? new byte[0] : given.getBytes(StandardCharsets.UTF_8);
        String name = null;
        for (Map.Entry<String, byte[]> token : tokens.entrySet()) {
            if (MessageDigest.isEqual(token.getValue(), bytes) && name == null) {
                name = token.getKey();
            }
        }
        return name;
    }

    private static Reply error(int status, String code, String message) {
        ObjectNode node = Json.object();
        node.put("error", message);
        node.put("code", code);
        return json(status, node);
    }

    private static Reply json(int status, JsonNode node) {
        return new Reply(status, "application/json; charset=utf-8", Json.write(node).getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            log.warn("console did not stop cleanly: {}", e.toString());
        }
    }
}
