package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.MongoServer;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.reflect.Field;

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
            ChannelInboundHandlerAdapter acceptor = new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object accepted) {
                    if (accepted instanceof Channel connection) {
                        connection.pipeline().addFirst("mongo2pc-quiet-disconnect", new QuietDisconnects());
                    }
                    ctx.fireChannelRead(accepted);
                }
            };
            // Added on the listening channel's own event loop, and waited for: added from another
            // thread, a handler is skipped until the loop has run its handlerAdded, so the first
            // connections accepted after start() returns would miss it.
            listening.eventLoop().submit(() -> listening.pipeline().addFirst("mongo2pc-quiet-disconnects", acceptor))
                    .syncUninterruptibly();
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
