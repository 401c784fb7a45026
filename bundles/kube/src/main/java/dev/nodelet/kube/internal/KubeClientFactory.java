package dev.nodelet.kube.internal;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientImpl;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds fabric8 clients from {@link KubeSettings}: master URL first, then the kubeconfig file, then fabric8's
 * automatic configuration. Usable without OSGi.
 */
public final class KubeClientFactory {
  private static final Logger LOG = LoggerFactory.getLogger(KubeClientFactory.class);

  /** Prefix of the names of the client's task threads, so that a leaked one is recognisable. */
  public static final String THREAD_NAME_PREFIX = "nodelet-kube-";

  /** Threads of fabric8's tasks: watch and informer events, each watch's in order. */
  static final int TASK_THREADS = 8;
  /** Threads of the JDK HTTP client (without {@code http2.enabled}): I/O completions and response bodies. */
  static final int HTTP_THREADS = 4;
  /** The name under which fabric8's builders add {@code io.fabric8.kubernetes.client.http.HttpLoggingInterceptor}. */
  static final String HTTP_LOGGING_INTERCEPTOR = "HttpLogging";

  private final AtomicInteger clients = new AtomicInteger();
  private final Optional<KubeMetrics> metrics;
  private final Http2Transport.Timing timing;

  /** A factory whose clients are not counted in metrics (plain Java). */
  public KubeClientFactory() {
    this(Optional.empty(), Http2Transport.Timing.DEFAULT);
  }

  /** A factory whose clients count their requests in {@code metrics}. */
  KubeClientFactory(KubeMetrics metrics) {
    this(Optional.of(metrics), Http2Transport.Timing.DEFAULT);
  }

  /** For tests: clients whose HTTP/2 transport has these times. */
  KubeClientFactory(Http2Transport.Timing timing) {
    this(Optional.empty(), timing);
  }

  private KubeClientFactory(Optional<KubeMetrics> metrics, Http2Transport.Timing timing) {
    this.metrics = metrics;
    this.timing = timing;
  }

  /**
   * The fabric8 configuration for these settings. Reads the kubeconfig file, if any; does no network I/O.
   *
   * @throws InvalidSettingException if the kubeconfig cannot be parsed or lacks the configured context
   */
  public Config clientConfig(KubeSettings settings) {
    String context = settings.context().orElse(null);
    Config config;
    if (settings.kubeconfig().isPresent()) {
      config = fromKubeconfig(settings, context);
    } else if (settings.masterUrl().isPresent()) {
      // an explicit server alone must not pick up credentials from the environment
      config = Config.empty();
    } else {
      config = Config.autoConfigure(context);
    }
    if (context != null && (config.getCurrentContext() == null
        || !context.equals(config.getCurrentContext().getName()))) {
      throw new InvalidSettingException(KubeSettings.CONTEXT, "context '" + context + "' not found in "
          + settings.kubeconfig().map(path -> "kubeconfig " + path).orElse("the automatic configuration"));
    }
    settings.masterUrl().ifPresent(config::setMasterUrl);
    config.setRequestTimeout(Math.toIntExact(settings.requestTimeout().toMillis()));
    config.setConnectionTimeout(Math.toIntExact(settings.connectionTimeout().toMillis()));
    // Streamed HTTP watches end at once when cancelled. A WebSocket watch needs a close handshake, and if the
    // client closes during it the JDK keeps the socket and its selector thread open for good.
    config.setOnlyHttpWatches(true);
    // No retries inside fabric8: its default of 10 with exponential backoff held a get against a stopped API server
    // for ~19 s (the ttl and get strategies' gets, under the TTL store's per-object lock). Every caller retries on its
    // own terms: informers reconnect with their exceptionHandler, the DRA controller requeues, stores fetch again.
    config.setRequestRetryBackoffLimit(0);
    return config;
  }

  /**
   * A new client for these settings; the caller closes it, which also ends its threads.
   *
   * @throws InvalidSettingException as {@link #clientConfig(KubeSettings)}
   */
  public KubernetesClient create(KubeSettings settings) {
    int client = clients.incrementAndGet();
    Config config = clientConfig(settings);
    LOG.info("Kubernetes client {} for {}: {}", client, config.getMasterUrl(), transport(settings, config));
    return new KubernetesClientBuilder()
        .withConfig(config)
        // explicit, so no ServiceLoader lookup decides which HTTP client is used
        .withHttpClientFactory(settings.http2()
            ? new Http2Transport(THREAD_NAME_PREFIX + client + "-http", metrics, timing)
            : new Http1JdkClientFactory(THREAD_NAME_PREFIX + client + "-http", metrics))
        // fabric8 adds this interceptor whenever its logger is at TRACE: it logs request and response bodies and
        // headers, so Secret data and bearer tokens. Nodelet never lets it in, whatever the logging configuration.
        .withHttpClientBuilderConsumer(builder -> builder.addOrReplaceInterceptor(HTTP_LOGGING_INTERCEPTOR, null))
        .withTaskExecutorSupplier(new NamedExecutorSupplier(THREAD_NAME_PREFIX + client))
        .build();
  }

  /** Which transport a client of these settings speaks, for the log. */
  static String transport(KubeSettings settings, Config config) {
    if (!settings.http2()) {
      return "HTTP/1.1 over the JDK client (http2.enabled=false)";
    }
    return config.getMasterUrl() != null && config.getMasterUrl().startsWith("http:")
        ? "HTTP/1.1 over Jetty's client (plain http)"
        : "HTTP/2 over Jetty's client (ALPN, HTTP/1.1 if the server offers no HTTP/2; a pool of connections, "
            + Http2Transport.IO_THREADS + " I/O threads)";
  }

  private static Config fromKubeconfig(KubeSettings settings, String context) {
    var file = settings.kubeconfig().orElseThrow().toFile();
    try {
      return Config.fromKubeconfig(context, file);
    } catch (RuntimeException e) {
      // the parser's message may quote the file, which can hold credentials: name only the failure type
      throw new InvalidSettingException(KubeSettings.KUBECONFIG_PATH,
          "'" + file + "' is not a valid kubeconfig file (" + e.getClass().getSimpleName() + ")");
    }
  }

  /**
   * A pool of at most {@code size} recognisable daemon threads that end after 30 s idle. Bounded, so that thousands
   * of watches starting or delivering at once queue their work rather than grow a thread each (the JDK's and
   * fabric8's default pools are unbounded).
   */
  static ThreadPoolExecutor boundedPool(String prefix, int size) {
    AtomicInteger threads = new AtomicInteger();
    ThreadPoolExecutor pool = new ThreadPoolExecutor(size, size, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
        runnable -> {
          Thread thread = new Thread(runnable, prefix + "-" + threads.incrementAndGet());
          thread.setDaemon(true);
          return thread;
        });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /**
   * The JDK HTTP client over HTTP/1.1 (one connection per open watch; the JDK client puts every HTTP/2 stream on one
   * connection and fails the 101st), on a bounded pool shut down when the client closes, measured if there are
   * metrics.
   */
  private static final class Http1JdkClientFactory extends JdkHttpClientFactory {
    private final String prefix;
    private final Optional<KubeMetrics> metrics;
    private final List<ExecutorService> pools = new CopyOnWriteArrayList<>();

    Http1JdkClientFactory(String prefix, Optional<KubeMetrics> metrics) {
      this.prefix = prefix;
      this.metrics = metrics;
    }

    @Override
    protected java.net.http.HttpClient.Builder createNewHttpClientBuilder() {
      java.net.http.HttpClient.Builder builder = super.createNewHttpClientBuilder();
      return metrics.<java.net.http.HttpClient.Builder>map(m -> new MeteredHttpClient.Builder(builder, m))
          .orElse(builder);
    }

    @Override
    protected void additionalConfig(java.net.http.HttpClient.Builder builder) {
      ExecutorService pool = boundedPool(prefix, HTTP_THREADS);
      pools.add(pool);
      builder.version(java.net.http.HttpClient.Version.HTTP_1_1).executor(pool);
    }

    @Override
    protected void closeHttpClient(JdkHttpClientImpl client) {
      super.closeHttpClient(client);
      pools.forEach(ExecutorService::shutdownNow);
    }
  }

  /** fabric8's task pool (watch and informer event delivery), bounded and shut down when the client closes. */
  private static final class NamedExecutorSupplier implements KubernetesClientBuilder.ExecutorSupplier {
    private final String prefix;

    NamedExecutorSupplier(String prefix) {
      this.prefix = prefix;
    }

    @Override
    public Executor get() {
      return boundedPool(prefix + "-task", TASK_THREADS);
    }

    @Override
    public void onClose(Executor executor) {
      ((ExecutorService) executor).shutdownNow();
    }
  }
}
