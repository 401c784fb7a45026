package dev.nodelet.dra.grpc.internal;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.SnapshotListener;
import dev.nodelet.dra.Subscription;
import dev.nodelet.dra.grpc.v1.DRAPluginGrpc;
import dev.nodelet.dra.grpc.v1.ListAndWatchResourcesRequest;
import dev.nodelet.dra.grpc.v1.ListAndWatchResourcesResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One registered external driver that streams its devices to Nodelet, as a {@link DeviceSnapshots} service: every
 * subscription is one {@code ListAndWatchResources}
 * call on a channel of its own, so a failed call leaves no connection state behind for the next attempt.
 */
final class GrpcDraDriver extends RegisteredDriver implements DeviceSnapshots {

  private final Transport transport;
  /** System.nanoTime() when the driver's stream last failed to connect with no snapshot since; 0 when reachable. */
  private final AtomicLong unreachableSince = new AtomicLong();

  GrpcDraDriver(String driverName, Path endpoint, Transport transport) {
    super(driverName, endpoint);
    this.transport = transport;
  }

  @Override
  public List<String> roles() {
    return List.of(DeviceSnapshots.class.getName());
  }

  @Override
  public String protocol() {
    return Registrar.PROTOCOL_VERSION;
  }

  /** Each subscription owns its channel: nothing to release here. */
  @Override
  public void close() {
  }

  @Override
  public Subscription subscribe(SnapshotListener listener) {
    Stream stream = new Stream(transport.channel(endpoint), listener);
    DRAPluginGrpc.newStub(stream.channel).listAndWatchResources(ListAndWatchResourcesRequest.getDefaultInstance(),
        stream);
    return stream;
  }

  @Override
  public Duration unreachableFor(long nowNanos) {
    long since = unreachableSince.get();
    return since == 0 ? Duration.ZERO : Duration.ofNanos(nowNanos - since);
  }

  /** "CODE: description", without the cause that {@code Status.toString()} adds. */
  static String describe(Status status) {
    return status.getDescription() == null ? status.getCode().toString()
        : status.getCode() + ": " + status.getDescription();
  }

  @Override
  public String toString() {
    return "external DRA driver " + driverName + " at " + endpoint;
  }

  /**
   * One call. gRPC calls the observer from one thread at a time; {@code ended} makes sure that the listener hears
   * of the end once and nothing after it, whichever of the driver, a malformed message or {@link #close} ends it.
   */
  private final class Stream implements StreamObserver<ListAndWatchResourcesResponse>, Subscription {

    private final ManagedChannel channel;
    private final SnapshotListener listener;
    private final AtomicBoolean ended = new AtomicBoolean();

    Stream(ManagedChannel channel, SnapshotListener listener) {
      this.channel = channel;
      this.listener = listener;
    }

    @Override
    public void onNext(ListAndWatchResourcesResponse response) {
      if (ended.get()) {
        return;
      }
      unreachableSince.set(0);
      try {
        listener.onSnapshot(SnapshotDecoder.decode(response));
      } catch (IllegalArgumentException e) {
        if (end()) {
          listener.onError(new ExternalDriverException("DRA driver " + driverName + " sent a malformed snapshot: "
              + e.getMessage(), e), true);
        }
      }
    }

    @Override
    public void onError(Throwable t) {
      if (!end()) {
        return;
      }
      Status status = Status.fromThrowable(t);
      if (status.getCode() == Status.Code.UNIMPLEMENTED) {
        listener.onError(new ExternalDriverException("DRA driver " + driverName
            + " does not implement ListAndWatchResources: " + describe(status), t), false);
      } else if (causedByParseError(t)) {
        listener.onError(new ExternalDriverException("DRA driver " + driverName + " sent a malformed message that"
            + " is not a nodelet.dra.v1.ListAndWatchResourcesResponse: " + describe(status), t), true);
      } else {
        long now = System.nanoTime();
        unreachableSince.compareAndSet(0, now == 0 ? 1 : now);
        listener.onError(new ExternalDriverException("ListAndWatchResources of DRA driver " + driverName + " on "
            + endpoint + " failed: " + describe(status), t), true);
      }
    }

    @Override
    public void onCompleted() {
      if (end()) {
        listener.onCompleted();
      }
    }

    @Override
    public void close() {
      end();
    }

    /** Marks the end and shuts the channel down, which cancels the call; true for the first caller only. */
    private boolean end() {
      if (!ended.compareAndSet(false, true)) {
        return false;
      }
      channel.shutdownNow();
      return true;
    }

    private static boolean causedByParseError(Throwable t) {
      for (Throwable c = t; c != null; c = c.getCause()) {
        if (c instanceof InvalidProtocolBufferException) {
          return true;
        }
      }
      return false;
    }
  }
}
