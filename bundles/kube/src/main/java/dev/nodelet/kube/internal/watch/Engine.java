package dev.nodelet.kube.internal.watch;

import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.kube.watch.ReflectorListener;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.net.URL;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The owner of what all reflectors share: a small callback pool, one timer thread, the restart bucket and what was
 * learnt about the server (whether it serves WatchList). Threads start on first use and all end on {@link #close()}.
 */
public final class Engine implements ReflectorEngine {

  private static final Logger LOG = LoggerFactory.getLogger(Engine.class);
  private static final AtomicInteger ENGINES = new AtomicInteger();

  /** The thread name prefix of every engine thread; tests look for it. */
  public static final String THREAD_PREFIX = "nodelet-reflector-";
  private static final int MAX_PATHS = 1_000;
  /** At most one reflector's failure is logged as a warning per this interval. */
  static final Duration WARNING_INTERVAL = Duration.ofSeconds(10);

  final KubernetesClient client;
  final EngineSettings settings;
  final RestartLimiter limiter;
  final DoubleSupplier random;
  /** The monotonic time of the restart bucket and the backoff. */
  final LongSupplier nanoTime;
  final ThreadPoolExecutor callbacks;
  final ScheduledThreadPoolExecutor timer;
  /** Shared by every reflector: the client's transport and JSON mapper, and the server's address for messages. */
  final HttpClient http;
  final KubernetesSerialization serialization;
  final String server;
  private final Map<PathKey, ResourcePath> paths = new ConcurrentHashMap<>();
  private final Set<HttpReflector<?>> reflectors = ConcurrentHashMap.newKeySet();
  /** The nanoTime from which the next failing reflector may log a warning. */
  private final AtomicLong nextWarning = new AtomicLong(System.nanoTime());
  /** Null until a server answered a WatchList request; false once it refused one. */
  private volatile Boolean watchListServed;
  private volatile boolean closed;

  public Engine(KubernetesClient client, EngineSettings settings) {
    this(client, settings, () -> { });
  }

  /** @param restarted told of each restart that passed the bucket, as its request starts (a metric's counter) */
  public Engine(KubernetesClient client, EngineSettings settings, Runnable restarted) {
    this(client, settings, System::nanoTime, () -> ThreadLocalRandom.current().nextDouble(), restarted);
  }

  /** For tests: the time source and random numbers of the restart bucket and the backoff. */
  Engine(KubernetesClient client, EngineSettings settings, LongSupplier nanoTime, DoubleSupplier random) {
    this(client, settings, nanoTime, random, () -> { });
  }

  private Engine(KubernetesClient client, EngineSettings settings, LongSupplier nanoTime, DoubleSupplier random,
      Runnable restarted) {
    this.client = Objects.requireNonNull(client, "client");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.random = random;
    this.nanoTime = nanoTime;
    this.http = client.getHttpClient();
    this.serialization = client.getKubernetesSerialization();
    URL master = client.getMasterUrl();
    this.server = master.getHost() + ":" + (master.getPort() < 0 ? master.getDefaultPort() : master.getPort());
    this.limiter = new RestartLimiter(settings.restartRate(), settings.restartBurst(), nanoTime, random, restarted);
    int id = ENGINES.incrementAndGet();
    this.callbacks = new ThreadPoolExecutor(settings.callbackThreads(), settings.callbackThreads(), 30,
        TimeUnit.SECONDS, new LinkedBlockingQueue<>(), threads(THREAD_PREFIX + id + "-callback-"));
    this.callbacks.allowCoreThreadTimeOut(true);
    this.timer = new ScheduledThreadPoolExecutor(1, threads(THREAD_PREFIX + id + "-timer-"));
    this.timer.setRemoveOnCancelPolicy(true);
    this.timer.setKeepAliveTime(30, TimeUnit.SECONDS);
    this.timer.allowCoreThreadTimeOut(true);
  }

  @Override
  public <T extends HasMetadata> Reflector.Builder<T> reflector(Class<T> type) {
    return new ReflectorBuilder<>(this, Objects.requireNonNull(type, "type"));
  }

  <T extends HasMetadata> Reflector<T> start(Class<T> type, String namespace, String fieldSelector,
      String labelSelector, ReflectorListener<T> listener, String resumeVersion, List<T> resumeObjects) {
    if (closed) {
      throw new IllegalStateException("the reflectors are closed: the Kubernetes connection they belong to was "
          + "replaced or stopped");
    }
    HttpReflector<T> reflector = new HttpReflector<>(this, type, namespace, fieldSelector, labelSelector, listener,
        resumeVersion, resumeObjects);
    reflectors.add(reflector);
    if (closed) { // closed meanwhile: do not leave a watch behind
      reflectors.remove(reflector);
      reflector.close();
      throw new IllegalStateException("the reflectors are closed");
    }
    reflector.start();
    return reflector;
  }

  private record PathKey(Class<?> type, String namespace) {
  }

  /** The collection path of a type in a namespace, one instance for all the reflectors that watch there. */
  ResourcePath path(Class<? extends HasMetadata> type, String namespace) {
    if (paths.size() > MAX_PATHS) {
      paths.clear(); // namespaces come and go over a node's life; the paths are rebuilt on demand
    }
    return paths.computeIfAbsent(new PathKey(type, namespace), key -> new ResourcePath(client.getMasterUrl(), type,
        namespace));
  }

  HttpClient http() {
    return http;
  }

  /**
   * Whether a reflector that starts failing logs it as a warning: one in {@link #WARNING_INTERVAL}, so that
   * thousands of watches failing together (the API server went away) log one line, not one each.
   */
  boolean mayWarn() {
    long now = System.nanoTime();
    long next = nextWarning.get();
    return now - next >= 0 && nextWarning.compareAndSet(next, now + WARNING_INTERVAL.toNanos());
  }

  void removed(HttpReflector<?> reflector) {
    reflectors.remove(reflector);
  }

  boolean tryWatchList() {
    return settings.watchList() && !Boolean.FALSE.equals(watchListServed);
  }

  void watchListServed() {
    watchListServed = Boolean.TRUE;
  }

  void watchListRefused(String what, int status) {
    if (!Boolean.FALSE.equals(watchListServed)) {
      LOG.info("The API server refused a WatchList request for {} ({}): using LIST then WATCH from now on", what,
          status);
    }
    watchListServed = Boolean.FALSE;
  }

  @Override
  public long restarts() {
    return limiter.started();
  }

  /** @return how many reflectors are open; for metrics and tests */
  public int size() {
    return reflectors.size();
  }

  ScheduledExecutorService timer() {
    return timer;
  }

  ExecutorService callbacks() {
    return callbacks;
  }

  @Override
  public void close() {
    closed = true;
    for (HttpReflector<?> reflector : Set.copyOf(reflectors)) {
      reflector.close();
    }
    callbacks.shutdownNow();
    timer.shutdownNow();
    try {
      if (!callbacks.awaitTermination(5, TimeUnit.SECONDS) || !timer.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("A reflector callback did not end within 5 s of closing");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static ThreadFactory threads(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return task -> {
      Thread thread = new Thread(task, prefix + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }
}
