package dev.nodelet.kube.internal.watch;

import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.ReflectorException;
import dev.nodelet.kube.watch.ReflectorListener;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A reflector that speaks to the API server through fabric8's transport-neutral {@link HttpClient}: it builds the
 * list and watch requests itself and reads the watch stream line by line, so that it decides when a watch ends
 * (fabric8's watch managers leave a watch open when it is closed before its response arrives).
 *
 * <p>All state changes run on the reflector's {@link SerialExecutor}; HTTP callbacks only hand over. A request is a
 * {@link Call}; answers of a call that is no longer the current one are dropped and their body closed.
 */
final class HttpReflector<T extends HasMetadata> implements Reflector<T> {

  private static final Logger LOG = LoggerFactory.getLogger(HttpReflector.class);
  static final String INITIAL_EVENTS_END = "k8s.io/initial-events-end";
  private static final int MIN_WATCH_SECONDS = 300;

  // a node holds thousands of reflectors: fields are what each needs of its own, the rest is the engine's
  private final Engine engine;
  private final Class<T> type;
  private final ResourcePath path;
  private final String fieldSelector;
  private final String labelSelector;
  private final ReflectorListener<T> listener;
  private final SerialExecutor serial;

  /** The objects as last reported; written on the serial executor only, read from anywhere. */
  private final KnownObjects<T> known = new KnownObjects<>();
  private volatile String resourceVersion;
  private volatile boolean synced;
  private volatile boolean closed;
  /** Started from a kept state: watch from its version, without a list, until a 410. */
  private volatile boolean resuming;
  private volatile Call current;
  // serial executor only
  private int failures;
  private boolean failing;
  /** Whether this failure period was logged as a warning (see {@link Engine#mayWarn()}). */
  private boolean warned;
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
    Call call = current;
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
    Map<String, String> query = new LinkedHashMap<>();
    query.put("fieldSelector", fieldSelector);
    query.put("labelSelector", labelSelector);
    HttpClient http = engine.http();
    HttpRequest request = http.newHttpRequestBuilder().uri(path.uri(query)).header("Accept", "application/json")
        .build();
    Call call = new Call(false, null);
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

  private void listAnswered(Call call, HttpResponse<String> answer, Throwable error) {
    if (closed || call != current) {
      return;
    }
    if (error != null) {
      failed(new ReflectorException("cannot list " + what() + ": " + error, 0, error));
      return;
    }
    if (!answer.isSuccessful()) {
      failed(statusError("list", answer.code(), answer.body()));
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
    replace(items, resourceVersionOf(list));
    watch(false, false, false);
  }

  /**
   * @param restart whether this resumes an earlier watch (the listener hears of it once the server accepts)
   * @param again whether this re-establishes the reflector (see {@link #startsNow()})
   */
  private void watch(boolean watchList, boolean restart, boolean again) {
    Map<String, String> query = new LinkedHashMap<>();
    query.put("watch", "true");
    query.put("allowWatchBookmarks", "true");
    query.put("fieldSelector", fieldSelector);
    query.put("labelSelector", labelSelector);
    if (watchList) {
      query.put("sendInitialEvents", "true");
      query.put("resourceVersionMatch", "NotOlderThan");
      query.put("resourceVersion", resourceVersion == null ? "" : resourceVersion);
    } else {
      query.put("resourceVersion", resourceVersion);
    }
    // spread the server-side ends of many watches, as client-go does
    query.put("timeoutSeconds",
        Long.toString(MIN_WATCH_SECONDS + (long) (engine.random.getAsDouble() * MIN_WATCH_SECONDS)));
    String from = restart ? resourceVersion : null; // the callbacks keep this, not the query
    HttpClient http = engine.http();
    HttpRequest request = http.newHttpRequestBuilder().uri(path.uri(query)).header("Accept", "application/json")
        .forStreaming().build();
    boolean paced = http instanceof StartGate.Transport transport && transport.gates(request);
    if (again && !paced && !startsNow()) {
      return;
    }
    StartGate gate = again && paced ? engine.limiter : null;
    Call call = new Call(watchList, gate);
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

  private void received(Call call, byte[] bytes, AsyncBody body) {
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
  private void event(Call call, String line) {
    if (line.isBlank()) {
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

  private void change(Call call, String eventType, T object) {
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

  private void bookmark(Call call, Map<String, Object> object) {
    healthy();
    String version = resourceVersionOf(object);
    if (call.initial != null) {
      Object metadata = object.get("metadata");
      Object annotations = metadata instanceof Map<?, ?> m ? m.get("annotations") : null;
      if (annotations instanceof Map<?, ?> a && "true".equals(a.get(INITIAL_EVENTS_END))) {
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
  private void unanswered(Call call) {
    if (closed || call != current || call.answered) {
      return;
    }
    call.cancel();
    failed(new ReflectorException("the watch of " + what() + " got no response from the API server within "
        + engine.settings.responseTimeout().toMillis() + " ms of being sent", 0, null));
  }

  /** The end of a watch's response: its stream ended, broke, or it never got one. */
  private void ended(Call call, Throwable failure) {
    if (closed || call != current) {
      return;
    }
    current = null;
    if (call.status == 410) {
      gone();
    } else if (call.status != 0 && call.status / 100 != 2) {
      if (call.watchList && refusesWatchList(call.status)) {
        engine.watchListRefused(what(), call.status);
        restart(0); // the fallback: LIST then WATCH, at once
      } else {
        failed(statusError("watch", call.status, call.errorBody().append(call.lines.rest()).toString()));
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
    failures++;
    if (!failing) {
      failing = true;
      warned = engine.mayWarn();
      if (warned) {
        LOG.warn("{} (API server {}); retrying with backoff (the other watches that fail within {} s are logged "
            + "at DEBUG)", error.getMessage(), engine.server, Engine.WARNING_INTERVAL.toSeconds());
      } else {
        LOG.debug("{} (API server {}); retrying with backoff", error.getMessage(), engine.server);
      }
    } else {
      LOG.debug("{} (failure {})", error.getMessage(), failures);
    }
    notify(() -> listener.onError(error));
    restart(backoffNanos());
  }

  private void healthy() {
    if (failing && warned) {
      LOG.info("The list and watch of {} work again", what());
    } else if (failing) {
      LOG.debug("The list and watch of {} work again", what());
    }
    failing = false;
    failures = 0;
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
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // the engine is closing, and this reflector with it
    }
  }

  private long backoffNanos() {
    long initial = engine.settings.initialBackoff().toNanos();
    long max = engine.settings.maxBackoff().toNanos();
    long delay = initial << Math.min(failures - 1, 20);
    if (delay <= 0 || delay > max) {
      delay = max;
    }
    // jitter in the upper half: never longer than the maximum, never in step with other reflectors
    return delay / 2 + (long) (engine.random.getAsDouble() * (delay / 2));
  }

  private void replace(KnownObjects<T> items, String version) {
    for (T gone : known.retainOnly(items)) {
      notify(() -> listener.onDelete(gone));
    }
    for (T item : items.values()) {
      T old = known.put(item);
      if (old == null) {
        notify(() -> listener.onAdd(item));
      } else if (!java.util.Objects.equals(old.getMetadata().getResourceVersion(),
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

  private ReflectorException statusError(String verb, int status, String body) {
    String message = null;
    if (body != null && !body.isBlank()) {
      try {
        Map<?, ?> parsed = engine.serialization.unmarshal(body, Map.class);
        message = parsed.get("message") instanceof String s ? s : null;
      } catch (RuntimeException e) {
        message = null; // not a Status: the code alone says what happened
      }
    }
    return new ReflectorException("cannot " + verb + " " + what() + ": the API server answered " + status
        + (message == null ? "" : " (" + message + ")"), status, null);
  }

  /** The answers of a server that does not serve WatchList (an older server or the WatchList gate off). */
  private static boolean refusesWatchList(int status) {
    return status == 400 || status == 422 || status == 415 || status == 501;
  }

  private static String resourceVersionOf(Map<String, Object> object) {
    Object metadata = object.get("metadata");
    Object version = metadata instanceof Map<?, ?> m ? m.get("resourceVersion") : null;
    return version == null ? null : version.toString();
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

  /** One list or watch request and what its answer has delivered so far; a watch's consumer of its body. */
  private final class Call implements AsyncBody.Consumer<List<ByteBuffer>>, EarlyBody {
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

    Call(boolean watchList, StartGate gate) {
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
      serial.execute(() -> received(this, bytes, answerBody));
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
      ScheduledFuture<?> timer;
      try {
        timer = engine.timer().schedule(() -> serial.execute(() -> unanswered(this)),
            engine.settings.responseTimeout().toNanos(), TimeUnit.NANOSECONDS);
      } catch (java.util.concurrent.RejectedExecutionException e) {
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
  }

  /**
   * Splits a byte stream into UTF-8 lines; a line may span chunks. Holds no buffer between whole lines: a watch
   * idles for minutes, and one large event must not leave its buffer behind.
   */
  static final class LineSplitter {
    /** The start of a line that spans chunks; null when the last chunk ended with a line break. */
    private ByteArrayOutputStream partial;

    List<String> feed(byte[] bytes) {
      List<String> lines = new ArrayList<>(2);
      int start = 0;
      for (int i = 0; i < bytes.length; i++) {
        if (bytes[i] == '\n') {
          if (partial == null) {
            lines.add(new String(bytes, start, i - start, StandardCharsets.UTF_8));
          } else {
            partial.write(bytes, start, i - start);
            lines.add(partial.toString(StandardCharsets.UTF_8));
            partial = null;
          }
          start = i + 1;
        }
      }
      if (start < bytes.length) {
        if (partial == null) {
          partial = new ByteArrayOutputStream(bytes.length - start);
        }
        partial.write(bytes, start, bytes.length - start);
      }
      return lines;
    }

    /** @return what came after the last line break */
    String rest() {
      return partial == null ? "" : partial.toString(StandardCharsets.UTF_8);
    }
  }
}
