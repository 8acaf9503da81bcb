package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.MongoServer;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.reflect.Field;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A client that goes away (its process killed, its connection reset) is a normal event for a
 * server: one INFO line, not upstream's ERROR with a stack trace of Netty's internals. Sits first
 * in every connection's pipeline, so the socket's error reaches it before upstream's handler; any
 * other error goes on to upstream as before. Stateless; one per connection.
 */
public final class QuietDisconnects extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(QuietDisconnects.class);

    private QuietDisconnects() { }

    /**
     * Puts a {@code QuietDisconnects} first in the pipeline of every connection {@code server}
     * accepts from now on. Upstream offers no hook, so this reaches its listening channel by
     * reflection; if that ever fails, the server works as before and only logs more.
     */
    public static void install(MongoServer server) {
        try {
            Field field = MongoServer.class.getDeclaredField("channel");
            field.setAccessible(true);
            Channel listening = (Channel) field.get(server);
            ChannelInboundHandlerAdapter onAccept = new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object accepted) {
                    if (accepted instanceof Channel connection) {
                        connection.pipeline().addFirst("mongo2pc-quiet-disconnect", new QuietDisconnects());
                    }
                    ctx.fireChannelRead(accepted);
                }
            };
            // Added on the listening channel's own thread and waited for: added from another thread,
            // the handler is passed over until that thread has run its handlerAdded, so a client
            // connecting right after start() could miss it (seen on a loaded machine).
            listening.eventLoop().submit(() -> listening.pipeline().addFirst("mongo2pc-quiet-disconnects", onAccept))
                    .get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.debug("client disconnects stay logged by upstream's handler: interrupted");
        } catch (ExecutionException | TimeoutException e) {
            log.debug("client disconnects stay logged by upstream's handler: {}", e.toString());
        } catch (ReflectiveOperationException | RuntimeException e) {
            log.debug("client disconnects stay logged by upstream's handler: {}", e.toString());
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            log.info("client {} disconnected ({})", ctx.channel().id(), cause.getMessage());
            ctx.close();
        } else {
            ctx.fireExceptionCaught(cause);
        }
    }
}
