package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.wire.MongoDatabaseHandler;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.RejectedExecutionException;

/**
 * Holds the replies of one connection until what their requests wrote or could have read is on
 * disk, without blocking the connection's thread: the request's thread registers the record its
 * reply waits for ({@link #holdNextReply}), goes back to other work, and the store's log writer
 * tells this gate when a force has made the record durable; the reply then leaves on the
 * connection's event loop. Replies leave in the order they were written. If the log fails, the
 * held replies are dropped and the connection is closed: the client sees its requests as in doubt
 * (applied in memory, perhaps not on disk), never as acknowledged.
 *
 * <p>Sits in the connection's pipeline just before upstream's {@link MongoDatabaseHandler}, so
 * every reply it writes passes here. Used on the channel's event loop only, but for the log
 * writer's completion, which hops onto it.
 */
final class ReplyGate extends ChannelOutboundHandlerAdapter {

    private static final AttributeKey<ReplyGate> KEY = AttributeKey.valueOf(ReplyGate.class, "gate");

    private final DurableStore store;
    private ChannelHandlerContext context;
    /** The record the next reply written waits for (0: none). */
    private long nextReplyLsn;
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    /** A flush was asked for while replies were held: flush once they leave. */
    private boolean flushHeld;

    private ReplyGate(DurableStore store) {
        this.store = store;
    }

    /**
     * The gate of {@code channel}, added to its pipeline on first use; null if the pipeline is not
     * upstream's (then the caller must wait for the disk itself). Call on the channel's event loop.
     */
    static ReplyGate of(Channel channel, DurableStore store) {
        if (!channel.eventLoop().inEventLoop()) {
            return null;
        }
        ReplyGate gate = channel.attr(KEY).get();
        if (gate != null) {
            return gate;
        }
        ChannelPipeline pipeline = channel.pipeline();
        ChannelHandlerContext database = pipeline.context(MongoDatabaseHandler.class);
        if (database == null) {
            return null;
        }
        gate = new ReplyGate(store);
        pipeline.addBefore(database.name(), "mongo2pc-reply-gate", gate);
        channel.attr(KEY).set(gate);
        return gate;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        context = ctx;
    }

    /** The next reply written on this connection leaves once record {@code lsn} is on disk. */
    void holdNextReply(long lsn) {
        nextReplyLsn = Math.max(nextReplyLsn, lsn);
        store.whenDurable(lsn, this::durable);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        long lsn = nextReplyLsn;
        nextReplyLsn = 0;
        if (held.isEmpty() && store.isDurable(lsn)) {
            ctx.write(msg, promise);
        } else {
            held.add(new Held(msg, promise, lsn));
        }
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (held.isEmpty()) {
            ctx.flush();
        } else {
            flushHeld = true;
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        drop(new IOException("connection closed before the write was on disk"));
    }

    /** The store's completion: runs on the log writer thread, or on this event loop. */
    private void durable(Throwable failure) {
        if (context.executor().inEventLoop()) {
            release(failure);
        } else {
            try {
                context.executor().execute(() -> release(failure));
            } catch (RejectedExecutionException e) {
                // the server is shutting down: the connection and its held replies are gone
            }
        }
    }

    private void release(Throwable failure) {
        boolean wrote = false;
        while (!held.isEmpty() && store.isDurable(held.peek().lsn)) {
            Held next = held.poll();
            context.write(next.message, next.promise);
            wrote = true;
        }
        if (wrote && (flushHeld || failure != null)) {
            context.flush();
            flushHeld = !held.isEmpty();
        }
        if (failure != null) {
            // what is durable has left; the rest may never be on disk
            drop(failure);
            context.close();
        }
    }

    private void drop(Throwable why) {
        for (Held h : held) {
            ReferenceCountUtil.release(h.message);
            h.promise.tryFailure(why);
        }
        held.clear();
    }

    private record Held(Object message, ChannelPromise promise, long lsn) {
    }
}
