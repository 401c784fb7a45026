package dev.nodelet.kube.internal.watch;

import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.ReflectorException;
import dev.nodelet.kube.watch.ReflectorListener;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A reflector that speaks to the API server through fabric8's transport-neutral {@link HttpClient}: it builds the
 * list and watch requests itself and reads the watch stream line by line, so that it decides when a watch ends
 * (fabric8's watch managers leave a watch open when it is closed before its response arrives).
 *
 * <p>All state changes run on the reflector's {@link SerialExecutor}; HTTP callbacks only hand over, and a watch's
 * body runs on the transport's thread that read it when the reflector has nothing else queued. A request is a
 * {@link ReflectorCall}; answers of a call that is no longer the current one are dropped and their body closed.
 */
final class HttpReflector<T extends HasMetadata> implements Reflector<T> {

  private static final Logger LOG = LoggerFactory.getLogger(HttpReflector.class);
  private static final int MIN_WATCH_SECONDS = 300;

  // a node holds thousands of reflectors: fields are what each needs of its own, the rest is the engine's
  final Engine engine;
  private final Class<T> type;
  private final ResourcePath path;
  private final String fieldSelector;
  private final String labelSelector;
  private final ReflectorListener<T> listener;
  final SerialExecutor serial;

  /** The objects as last reported; written on the serial executor only, read from anywhere. */
  private final KnownObjects<T> known = new KnownObjects<>();
  private volatile String resourceVersion;
  private volatile boolean synced;
  private volatile boolean closed;
  /** Started from a kept state: watch from its version, without a list, until a 410. */
  private volatile boolean resuming;
  private volatile ReflectorCall<T> current;
  // serial executor only
  private final FailureBackoff backoff;
  /** Whether a request was sent before: a watch without a list after that is a restart. */
  private boolean connected;
  private ScheduledFuture<?> retry;

  HttpReflector(Engine engine, Class<T> type, String namespace, String fieldSelector, String labelSelector,
      ReflectorListener<T> listener, String resumeVersion, List<T> resumeObjects) {
    this.engine = engine;
    this.type = type;
    this.path = engine.path(type, namespace);
    this.fieldSelector = fieldSelector;
    this.labelSelector = labelSelector;
    this.listener = listener;
    this.serial = new SerialExecutor(engine.callbacks());
    this.backoff = new FailureBackoff(engine);
    if (resumeVersion != null) {
      resumeObjects.forEach(known::put);
      resourceVersion = resumeVersion;
      resuming = true;
    }
  }

  void start() {
    serial.execute(() -> connect(false));
  }

  @Override
  public boolean isSynced() {
    return synced && !closed;
  }

  @Override
  public Optional<String> resourceVersion() {
    return Optional.ofNullable(resourceVersion);
  }

  @Override
  public List<T> list() {
    return known.values();
  }

  @Override
  public Optional<T> get(String namespace, String name) {
    return Optional.ofNullable(known.get(namespace, name));
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    synced = false;
    serial.close();
    ReflectorCall<T> call = current;
    if (call != null) {
      call.cancel();
    }
    ScheduledFuture<?> r = retry;
    if (r != null) {
      r.cancel(false);
    }
    engine.removed(this);
  }

  @Override
  public String toString() {
    return "Reflector[" + what() + "]";
  }

  /** What is watched, for messages: built when needed, not kept. */
  private String what() {
    return path.description() + (fieldSelector == null ? "" : " with fields " + fieldSelector)
        + (labelSelector == null ? "" : " with labels " + labelSelector);
  }

  // ---- requests (serial executor) ----

  /** @param again whether this re-establishes the reflector: its request then passes the restart bucket */
  private void connect(boolean again) {
    retry = null;
    if (closed) {
      return;
    }
    if (resourceVersion == null || !(synced || resuming)) {
      if (engine.tryWatchList()) {
        watch(true, false, again);
      } else {
        listThenWatch(again);
      }
    } else {
      watch(false, connected, again);
    }
    connected = true;
  }

  /**
   * A restart's request passes the bucket when it actually starts. Where the transport holds the request (waiting
   * for a connection) it asks the call's gate itself then; otherwise the check is here, right before sending, as
   * reserved starts can run late and go out together.
   *
   * @return false if the request does not conform now and was reserved again
   */
  private boolean startsNow() {
    long wait = engine.limiter.tryStart();
    if (wait > 0) {
      restart(wait);
      return false;
    }
    return true;
  }

  private void listThenWatch(boolean again) {
    if (again && !startsNow()) {
      return;
    }
    HttpClient http = engine.http();
    HttpRequest request = http.newHttpRequestBuilder().uri(path.listUri(fieldSelector, labelSelector))
        .header("Accept", "application/json").build();
    ReflectorCall<T> call = new ReflectorCall<>(this, false, null);
    current = call;
    CompletableFuture<HttpResponse<String>> response;
    try {
      response = http.sendAsync(request, String.class);
    } catch (RuntimeException e) {
      failed(new ReflectorException("cannot list " + what() + ": " + e, 0, e)); // e.g. the client is closed
      return;
    }
    call.inFlight = response;
    if (closed) {
      call.cancel();
      return;
    }
    response.whenComplete((answer, error) -> serial.execute(() -> listAnswered(call, answer, error)));
  }

  private void listAnswered(ReflectorCall<T> call, HttpResponse<String> answer, Throwable error) {
    if (closed || call != current) {
      return;
    }
    if (error != null) {
      failed(new ReflectorException("cannot list " + what() + ": " + error, 0, error));
      return;
    }
    if (!answer.isSuccessful()) {
      failed(ApiAnswers.statusError(engine.serialization, "list", what(), answer.code(), answer.body()));
      return;
    }
    Map<String, Object> list;
    try {
      list = engine.serialization.unmarshal(answer.body(), Map.class);
    } catch (RuntimeException e) {
      failed(new ReflectorException("the list of " + what() + " cannot be read: " + e.getMessage(), answer.code(), e));
      return;
    }
    KnownObjects<T> items = new KnownObjects<>();
    Object listed = list.get("items");
    if (listed instanceof List<?> objects) {
      for (Object object : objects) {
        items.put(engine.serialization.convertValue(object, type));
      }
    }
    replace(items, ApiAnswers.resourceVersionOf(list));
    watch(false, false, false);
  }

  /**
   * @param restart whether this resumes an earlier watch (the listener hears of it once the server accepts)
   * @param again whether this re-establishes the reflector (see {@link #startsNow()})
   */
  private void watch(boolean watchList, boolean restart, boolean again) {
    // spread the server-side ends of many watches, as client-go does
    long timeoutSeconds = MIN_WATCH_SECONDS + (long) (engine.random.getAsDouble() * MIN_WATCH_SECONDS);
    String from = restart ? resourceVersion : null; // the callbacks keep this, not the query
    HttpClient http = engine.http();
    HttpRequest request = http.newHttpRequestBuilder()
        .uri(path.watchUri(fieldSelector, labelSelector, watchList, resourceVersion, timeoutSeconds))
        .header("Accept", "application/json").forStreaming().build();
    boolean paced = http instanceof StartGate.Transport transport && transport.gates(request);
    if (again && !paced && !startsNow()) {
      return;
    }
    StartGate gate = again && paced ? engine.limiter : null;
    ReflectorCall<T> call = new ReflectorCall<>(this, watchList, gate);
    current = call;
    CompletableFuture<HttpResponse<AsyncBody>> response;
    try {
      response = http.consumeBytes(request, call);
    } catch (RuntimeException e) {
      failed(new ReflectorException("cannot watch " + what() + ": " + e, 0, e)); // e.g. the client is closed
      return;
    }
    call.inFlight = response;
    call.handedOver();
    response.whenComplete((answer, error) -> {
      call.answered();
      if (answer != null) {
        call.opened(answer.body());
        if (closed || call != current) {
          answer.body().cancel(); // closed while in flight: the server sees the watch end now
          return;
        }
        call.status = answer.code();
        if (restart && answer.code() / 100 == 2) {
          serial.execute(() -> {
            if (call == current) {
              notify(() -> listener.onRestart(from));
            }
          });
        }
        answer.body().done().whenComplete((ignored, failure) -> serial.execute(() -> ended(call, failure)));
        answer.body().consume();
      } else {
        serial.execute(() -> ended(call, error));
      }
    });
    if (closed) {
      call.cancel();
    }
  }

  void received(ReflectorCall<T> call, byte[] bytes, AsyncBody body) {
    if (closed || call != current) {
      body.cancel();
      return;
    }
    for (String line : call.lines.feed(bytes)) {
      if (call != current) {
        return; // a line ended this call (410, error)
      }
      if (call.status / 100 != 2) {
        call.errorBody().append(line);
      } else {
        event(call, line);
      }
    }
    if (call == current && !closed) {
      body.consume();
    }
  }

  @SuppressWarnings("unchecked")
  private void event(ReflectorCall<T> call, String line) {
    if (line.isBlank()) {
      return;
    }
    ChangeEvents.Change<T> decoded = ChangeEvents.decode(engine.serialization, type, line);
    if (decoded != null) {
      change(call, decoded.type(), decoded.object());
      return;
    }
    Map<String, Object> event;
    try {
      event = engine.serialization.unmarshal(line, Map.class);
    } catch (RuntimeException e) {
      call.cancel();
      failed(new ReflectorException("a watch event of " + what() + " cannot be read: " + e.getMessage(), 200, e));
      return;
    }
    String eventType = String.valueOf(event.get("type"));
    Object object = event.get("object");
    if (!(object instanceof Map)) {
      call.cancel();
      failed(new ReflectorException("a " + eventType + " watch event of " + what() + " has no object", 200, null));
      return;
    }
    Map<String, Object> map = (Map<String, Object>) object;
    switch (eventType) {
      case "ADDED", "MODIFIED", "DELETED" -> change(call, eventType, engine.serialization.convertValue(map, type));
      case "BOOKMARK" -> bookmark(call, map);
      case "ERROR" -> {
        call.cancel();
        int code = map.get("code") instanceof Number n ? n.intValue() : 0;
        if (code == 410) {
          gone();
        } else {
          failed(new ReflectorException("the watch of " + what() + " ended with an error: " + map.get("message"),
              code, null));
        }
      }
      default -> LOG.debug("Ignoring a watch event of type {} on {}", eventType, what());
    }
  }

  private void change(ReflectorCall<T> call, String eventType, T object) {
    healthy();
    if (call.initial != null) {
      // WatchList: the initial state arrives as ADDED events, reported as a whole at the end bookmark
      call.initial.put(object);
      return;
    }
    confirmed();
    resourceVersion = object.getMetadata().getResourceVersion();
    if (eventType.equals("DELETED")) {
      known.remove(object);
      notify(() -> listener.onDelete(object));
    } else {
      T old = known.put(object);
      notify(old == null ? () -> listener.onAdd(object) : () -> listener.onUpdate(old, object));
    }
  }

  private void bookmark(ReflectorCall<T> call, Map<String, Object> object) {
    healthy();
    String version = ApiAnswers.resourceVersionOf(object);
    if (call.initial != null) {
      if (ApiAnswers.endsInitialEvents(object)) {
        engine.watchListServed();
        KnownObjects<T> initial = call.initial;
        call.initial = null;
        replace(initial, version);
      }
      return;
    }
    if (version != null) {
      confirmed();
      resourceVersion = version;
      notify(() -> listener.onBookmark(version));
    }
  }

  /** A watch event: a reflector started from a kept state is in step with the server from now on. */
  private void confirmed() {
    if (resuming) {
      resuming = false;
      synced = true;
    }
  }

  /**
   * A sent watch got no response headers in time: its connection lost its server without closing (nothing ends a
   * quiet connection: watches must stay open while idle). It fails, and restarts as after any failure.
   */
  void unanswered(ReflectorCall<T> call) {
    if (closed || call != current || call.answered) {
      return;
    }
    call.cancel();
    failed(new ReflectorException("the watch of " + what() + " got no response from the API server within "
        + engine.settings.responseTimeout().toMillis() + " ms of being sent", 0, null));
  }

  /** The end of a watch's response: its stream ended, broke, or it never got one. */
  private void ended(ReflectorCall<T> call, Throwable failure) {
    if (closed || call != current) {
      return;
    }
    current = null;
    if (call.status == 410) {
      gone();
    } else if (call.status != 0 && call.status / 100 != 2) {
      if (call.watchList && ApiAnswers.refusesWatchList(call.status)) {
        engine.watchListRefused(what(), call.status);
        restart(0); // the fallback: LIST then WATCH, at once
      } else {
        String body = call.errorBody().append(call.lines.rest()).toString();
        failed(ApiAnswers.statusError(engine.serialization, "watch", what(), call.status, body));
      }
    } else if (failure != null) {
      failed(new ReflectorException("the watch of " + what() + " failed: " + failure, call.status, failure));
    } else if (call.initial != null) {
      failed(new ReflectorException("the watch of " + what() + " ended before its initial events did", 200, null));
    } else {
      restart(0); // a server-side end (timeout, cut): resume from the last resourceVersion
    }
  }

  /** 410 Gone: the resourceVersion is too old; the one case that lists again. */
  private void gone() {
    current = null;
    String version = resourceVersion;
    LOG.debug("The resourceVersion {} of {} is gone; listing again", version, what());
    synced = false;
    resuming = false;
    resourceVersion = null;
    notify(() -> listener.onGone(version));
    restart(0);
  }

  private void failed(ReflectorException error) {
    current = null;
    long delay = backoff.failed(LOG, error);
    notify(() -> listener.onError(error));
    restart(delay);
  }

  private void healthy() {
    if (backoff.failing()) {
      backoff.recovered(LOG, what());
    }
  }

  /**
   * Connects again once a slot of the bucket is due, no earlier than {@code minDelayNanos}: the reservations spread
   * restarts that would start together, and while the server is away they space each reflector's attempts, so that
   * its backoff does not grow with every refused connect.
   */
  private void restart(long minDelayNanos) {
    if (closed) {
      return;
    }
    long delay = engine.limiter.reserve(minDelayNanos);
    try {
      retry = engine.timer().schedule(() -> serial.execute(() -> connect(true)), delay, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // the engine is closing, and this reflector with it
    }
  }

  private void replace(KnownObjects<T> items, String version) {
    for (T gone : known.retainOnly(items)) {
      notify(() -> listener.onDelete(gone));
    }
    for (T item : items.values()) {
      T old = known.put(item);
      if (old == null) {
        notify(() -> listener.onAdd(item));
      } else if (!Objects.equals(old.getMetadata().getResourceVersion(),
          item.getMetadata().getResourceVersion())) {
        notify(() -> listener.onUpdate(old, item));
      }
    }
    resourceVersion = version;
    synced = true;
    healthy();
    notify(() -> listener.onSynced(version));
  }

  private void notify(Runnable callback) {
    if (closed) {
      return;
    }
    try {
      callback.run();
    } catch (RuntimeException e) {
      LOG.error("A listener of {} failed", what(), e);
    }
  }
}
