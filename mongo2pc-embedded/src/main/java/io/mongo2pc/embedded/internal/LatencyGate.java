package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.wire.MongoDatabaseHandler;
import de.bwaldvogel.mongo.wire.message.ClientRequest;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.RejectedExecutionException;

/**
 * Holds each reply of one connection until {@link AddedLatency} has passed since its request
 * arrived, without holding a thread: the reply waits here, and the latency's timer hands it back to
 * the connection's event loop when it is due. Replies leave in the order they were written (every
 * request gets one reply, in order, and all wait the same time, so each is due no earlier than the
 * one before).
 *
 * <p>Sits after upstream's decoder, so it sees each request arrive, and outside the
 * {@link ReplyGate} (nearer the network): a reply that waited there for the disk comes here next,
 * and leaves at whichever is later, durable or due. Used on the channel's event loop only.
 */
final class LatencyGate extends ChannelDuplexHandler {

    private static final AttributeKey<LatencyGate> KEY = AttributeKey.valueOf(LatencyGate.class, "latency");

    private final AddedLatency latency;
    /** When the reply of each request that arrived and is not answered yet may leave (nanoTime). */
    private final ArrayDeque<Long> due = new ArrayDeque<>();
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    private ChannelHandlerContext context;
    /** The timer will wake this gate for the first held reply. */
    private boolean wakeAsked;

    private LatencyGate(AddedLatency latency) {
        this.latency = latency;
    }

    /**
     * Adds a gate to {@code channel}'s pipeline unless it has one (or the pipeline is not
     * upstream's); the request being handled counts as arrived now. Call on the channel's event loop.
     */
    static void install(Channel channel, AddedLatency latency) {
        if (channel.attr(KEY).get() != null || !channel.eventLoop().inEventLoop()) {
            return;
        }
        ChannelPipeline pipeline = channel.pipeline();
        // before the reply gate if there is one (it is added before the database handler), so that
        // a reply passes the reply gate first
        ChannelHandlerContext next = pipeline.context(ReplyGate.class);
        if (next == null) {
            next = pipeline.context(MongoDatabaseHandler.class);
        }
        if (next == null) {
            return;
        }
        LatencyGate gate = new LatencyGate(latency);
        pipeline.addBefore(next.name(), "mongo2pc-latency", gate);
        channel.attr(KEY).set(gate);
        gate.due.add(System.nanoTime() + latency.nanos());
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        context = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ClientRequest) {
            due.add(System.nanoTime() + latency.nanos());
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        Long at = due.poll();
        long leave = at == null ? System.nanoTime() : at;
        if (held.isEmpty() && System.nanoTime() - leave >= 0) {
            ctx.write(msg, promise);
            return;
        }
        held.add(new Held(msg, promise, leave));
        askWake();
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        // with replies held, the flush comes when they leave
        if (held.isEmpty()) {
            ctx.flush();
        }
    }

    private void askWake() {
        if (!wakeAsked && !held.isEmpty()) {
            wakeAsked = true;
            latency.wakeAt(held.peek().leave, this::wake);
        }
    }

    /** On the timer's thread: back to the event loop. */
    private void wake() {
        try {
            context.executor().execute(this::release);
        } catch (RejectedExecutionException e) {
            // the server is shutting down: the connection and its held replies are gone
        }
    }

    private void release() {
        wakeAsked = false;
        long now = System.nanoTime();
        boolean wrote = false;
        while (!held.isEmpty() && now - held.peek().leave >= 0) {
            Held next = held.poll();
            context.write(next.message, next.promise);
            wrote = true;
        }
        if (wrote) {
            context.flush();
        }
        askWake();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        for (Held h : held) {
            ReferenceCountUtil.release(h.message);
            h.promise.tryFailure(new IOException("connection closed before its reply was due"));
        }
        held.clear();
    }

    private record Held(Object message, ChannelPromise promise, long leave) {
    }
}
