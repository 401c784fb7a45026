package dev.nodelet.dra.grpc.internal;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.nio.file.Path;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * The gRPC client side of every driver connection: one epoll event loop group, owned here and shut down on
 * {@link #close()}. The group (with Netty's native library and a few hundred classes) is made at the first dial, so
 * a node without drivers never loads it. Channels are built with Netty's builder and an explicit channel type, so grpc-java never looks
 * for a transport provider through {@code ServiceLoader} (which would search across bundles), and callbacks run on
 * the event loop ({@code directExecutor}), so grpc-java's shared executor threads are never started.
 */
final class Transport implements AutoCloseable {

  static final String THREAD_PREFIX = "nodelet-dra-grpc";

  private final int threads;
  private final IntFunction<EventLoopGroup> groupFactory;
  private EventLoopGroup group;
  private boolean closed;

  Transport(int threads) {
    this(threads, Transport::epollGroup);
  }

  /** For tests: {@code groupFactory} makes the event loop group of {@code threads} threads at the first dial. */
  Transport(int threads, IntFunction<EventLoopGroup> groupFactory) {
    this.threads = threads;
    this.groupFactory = groupFactory;
  }

  /**
   * A plaintext channel to the gRPC server on a unix socket; the caller shuts it down.
   *
   * @throws IllegalStateException if Netty's epoll transport is not available, or the transport is closed
   */
  ManagedChannel channel(Path socket) {
    return NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
        .eventLoopGroup(group())
        .channelType(EpollDomainSocketChannel.class)
        .withOption(ChannelOption.SO_KEEPALIVE, null) // TCP only: gRPC sets it, Netty warns on unix sockets
        .usePlaintext()
        .overrideAuthority("localhost")
        .directExecutor()
        .build();
  }

  /** The event loop, for timers that must end with the transport. */
  ScheduledExecutorService scheduler() {
    return group();
  }

  /** Whether a dial has made the event loop group; for tests. */
  synchronized boolean started() {
    return group != null;
  }

  private synchronized EventLoopGroup group() {
    if (closed) {
      throw new IllegalStateException("the DRA gRPC transport is closed");
    }
    if (group == null) {
      group = groupFactory.apply(threads);
    }
    return group;
  }

  private static EventLoopGroup epollGroup(int threads) {
    if (!Epoll.isAvailable()) {
      throw new IllegalStateException("unix domain sockets need Netty's epoll transport, which is not available"
          + " here: " + Epoll.unavailabilityCause());
    }
    return new EpollEventLoopGroup(threads, new DefaultThreadFactory(THREAD_PREFIX + "-io", true));
  }

  /** Stops the event loop threads; channels still open fail. Waits a bounded time for the threads to end. */
  @Override
  public void close() {
    EventLoopGroup started;
    synchronized (this) {
      closed = true;
      started = group;
    }
    if (started != null) {
      started.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
  }
}
