package dev.nodelet.kube.internal.watch;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.http.AsyncBody;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One list or watch request of a {@link HttpReflector} and what its answer has delivered so far; a watch's consumer
 * of its body, and the deadline of its response's headers. What arrives is handed to the reflector on its serial
 * executor.
 */
final class ReflectorCall<T extends HasMetadata> implements AsyncBody.Consumer<List<ByteBuffer>>, EarlyBody {
  private final HttpReflector<T> reflector;
  final boolean watchList;
  /** The restart bucket for a transport that holds this request; null when it starts as soon as it can. */
  private final StartGate gate;
  final LineSplitter lines = new LineSplitter();
  /** The body of an answer that is not a 2xx, for its message; null until one arrives. */
  private StringBuilder errorBody;
  /** WatchList only: the initial state until the initial-events-end bookmark; then null. */
  KnownObjects<T> initial;
  volatile CompletableFuture<?> inFlight;
  volatile int status;
  private volatile AsyncBody body;
  private volatile boolean cancelled;
  /** The transport tells when the request leaves ({@link #started()}), which may be long after it was sent. */
  private volatile boolean early;
  /** The response or the failure arrived; the deadline no longer applies. */
  volatile boolean answered;
  /** The deadline of the response's headers, armed when the request leaves. */
  private volatile ScheduledFuture<?> deadline;

  ReflectorCall(HttpReflector<T> reflector, boolean watchList, StartGate gate) {
    this.reflector = reflector;
    this.watchList = watchList;
    this.gate = gate;
    this.initial = watchList ? new KnownObjects<>() : null;
  }

  /** The response arrived: keep its body to close, and close it at once if the call was cancelled meanwhile. */
  void opened(AsyncBody answerBody) {
    body = answerBody;
    inFlight = null; // cancelling goes through the body from now on
    if (cancelled) {
      answerBody.cancel();
    }
  }

  @Override
  public void consume(List<ByteBuffer> buffers, AsyncBody answerBody) {
    byte[] bytes = copy(buffers); // the transport may reuse its buffers once this returns
    // on the transport's thread when the reflector is idle: no pool thread to wake per event
    reflector.serial.executeHere(() -> reflector.received(this, bytes, answerBody));
  }

  /** The transport sent the request: cancelling ends it from now on, also before its response arrives. */
  @Override
  public void sent(AsyncBody earlyBody) {
    early = true;
    disarm(); // armed by handedOver() if fabric8's interceptors sent the request later: started() arms it
    body = earlyBody;
    if (cancelled) {
      earlyBody.cancel();
    }
  }

  @Override
  public void started() {
    arm();
  }

  /** The transport has the request: one that does not say when it leaves sends it now. */
  void handedOver() {
    if (!early) {
      arm();
    }
  }

  void answered() {
    answered = true;
    disarm();
  }

  private void arm() {
    if (answered || cancelled) {
      return;
    }
    Engine engine = reflector.engine;
    ScheduledFuture<?> timer;
    try {
      timer = engine.timer().schedule(() -> reflector.serial.execute(() -> reflector.unanswered(this)),
          engine.settings.responseTimeout().toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      return; // the engine is closing, and this reflector with it
    }
    ScheduledFuture<?> previous = deadline;
    deadline = timer;
    if (previous != null) {
      previous.cancel(false);
    }
    if (answered || cancelled) {
      disarm();
    }
  }

  private void disarm() {
    ScheduledFuture<?> timer = deadline;
    deadline = null;
    if (timer != null) {
      timer.cancel(false);
    }
  }

  @Override
  public StartGate gate() {
    return gate;
  }

  StringBuilder errorBody() {
    if (errorBody == null) {
      errorBody = new StringBuilder();
    }
    return errorBody;
  }

  /** Ends the request: its body if it has one, else the pending response (closed on arrival). */
  void cancel() {
    cancelled = true;
    disarm();
    AsyncBody b = body;
    if (b != null) {
      b.cancel();
    }
    CompletableFuture<?> f = inFlight;
    if (f != null) {
      f.cancel(true);
    }
  }

  private static byte[] copy(List<ByteBuffer> buffers) {
    int size = 0;
    for (ByteBuffer buffer : buffers) {
      size += buffer.remaining();
    }
    byte[] bytes = new byte[size];
    int at = 0;
    for (ByteBuffer buffer : buffers) {
      int n = buffer.remaining();
      buffer.get(bytes, at, n);
      at += n;
    }
    return bytes;
  }
}
