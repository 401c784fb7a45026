package dev.nodelet.dra.grpc.internal;

import dev.nodelet.controller.Backoff;
import dev.nodelet.controller.Scheduler;
import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.HealthListener;
import dev.nodelet.dra.Subscription;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One listener's watch of a kubelet plugin's device health: one {@code NodeWatchResources} call at a time on the
 * plugin's channel. A plugin that advertised health but answers "Unimplemented" is asked again after the plugin's
 * health {@link Backoff} ({@link KubeletPlugin#healthBackoff}, logged once), and the devices this watch reported turn
 * Unknown meanwhile; any other end of the call ends the watch and the listener hears of it once, as retryable. Nothing reaches the listener after
 * {@link #close}.
 *
 * @param <Q> the request type of the health API version
 * @param <R> its response type
 */
final class HealthWatch<Q, R> implements Subscription {

  private static final Logger LOG = LoggerFactory.getLogger(HealthWatch.class);

  private final String who;
  private final String service;
  private final HealthListener listener;
  private final Backoff backoff; // one per plugin, shared by its watches
  private final Scheduler scheduler;
  private final Consumer<ClientResponseObserver<Q, R>> start;
  private final Function<R, List<DeviceHealth>> decode;
  private final Object lock = new Object();
  private final Map<String, DeviceHealth> reported = new LinkedHashMap<>(); // by the one calling thread at a time
  private Call current; // guarded by lock
  private Scheduler.Task timer; // guarded by lock
  private boolean closed; // guarded by lock

  /**
   * @param who the driver and endpoint, for messages
   * @param service the advertised health service, for messages
   * @param start starts one call that delivers to the observer
   */
  HealthWatch(String who, String service, HealthListener listener, Backoff backoff, Scheduler scheduler,
      Consumer<ClientResponseObserver<Q, R>> start, Function<R, List<DeviceHealth>> decode) {
    this.who = who;
    this.service = service;
    this.listener = listener;
    this.backoff = backoff;
    this.scheduler = scheduler;
    this.start = start;
    this.decode = decode;
  }

  /** Calls the driver now, or when its back-off is over; returns this. */
  HealthWatch<Q, R> open() {
    Duration wait = backoff.remaining(scheduler.nanoTime());
    if (!wait.isZero()) {
      schedule(wait);
    } else {
      call();
    }
    return this;
  }

  private void call() {
    Call call = new Call();
    synchronized (lock) {
      if (closed) {
        return;
      }
      current = call;
      timer = null;
    }
    start.accept(call);
  }

  private void schedule(Duration delay) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      try {
        timer = scheduler.schedule(this::call, delay);
        return;
      } catch (RejectedExecutionException e) {
        closed = true; // the transport is shutting down: the bundle stops
      }
    }
    listener.onError(new ExternalDriverException("the health watch of " + who + " ended: shutting down"), true);
  }

  /** True, once, if the watch was open and {@code call} is its current call: the watch is then over. */
  private boolean end(Call call) {
    synchronized (lock) {
      if (closed || current != call) {
        return false;
      }
      closed = true;
      return true;
    }
  }

  private boolean isCurrent(Call call) {
    synchronized (lock) {
      return !closed && current == call;
    }
  }

  @Override
  public void close() {
    ClientCallStreamObserver<Q> open = null;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      if (timer != null) {
        timer.cancel();
      }
      if (current != null) {
        open = current.requests;
      }
    }
    if (open != null) {
      open.cancel("watch closed", null);
    }
  }

  private void unimplemented(Call call, Status status) {
    Duration delay;
    boolean first;
    synchronized (backoff) {
      delay = backoff.failed(scheduler.nanoTime());
      first = backoff.failures() == 1; // logged once per plugin until it reports
    }
    if (first) {
      LOG.info("{} advertises {} but answers {}; asking again after {} ms, doubling up to {} ms (logged once)",
          who, service, GrpcDraDriver.describe(status), delay.toMillis(), backoff.max().toMillis());
    } else {
      LOG.debug("{} still answers {} to NodeWatchResources; asking again after {} ms", who, status.getCode(),
          delay.toMillis());
    }
    if (!reported.isEmpty() && isCurrent(call)) {
      listener.onHealth(reported.values().stream().map(d -> new DeviceHealth(d.poolName(), d.deviceName(),
          DeviceHealth.Health.UNKNOWN, d.lastUpdated(), d.timeout(), "the driver reports no health")).toList());
      reported.clear();
    }
    schedule(delay);
  }

  /** One call; its callbacks count only while it is the watch's current call. */
  private final class Call implements ClientResponseObserver<Q, R> {
    private volatile ClientCallStreamObserver<Q> requests;

    @Override
    public void beforeStart(ClientCallStreamObserver<Q> requestStream) {
      this.requests = requestStream;
    }

    @Override
    public void onNext(R response) {
      if (!isCurrent(this)) {
        return;
      }
      boolean answered;
      synchronized (backoff) {
        answered = backoff.failures() > 0;
        backoff.reset();
      }
      if (answered) {
        LOG.info("{} reports device health on {} again", who, service);
      }
      List<DeviceHealth> devices = decode.apply(response);
      devices.forEach(d -> reported.put(d.poolName() + "/" + d.deviceName(), d));
      listener.onHealth(devices);
    }

    @Override
    public void onError(Throwable t) {
      Status status = Status.fromThrowable(t);
      if (status.getCode() == Status.Code.UNIMPLEMENTED) {
        if (isCurrent(this)) {
          unimplemented(this, status);
        }
      } else if (end(this)) {
        listener.onError(new ExternalDriverException("NodeWatchResources of " + who + " failed: "
            + GrpcDraDriver.describe(status), t), true);
      }
    }

    @Override
    public void onCompleted() {
      if (end(this)) {
        listener.onError(new ExternalDriverException("NodeWatchResources of " + who + " ended"), true);
      }
    }
  }
}
