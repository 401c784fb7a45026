package dev.nodelet.kube.internal;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Builds fabric8 clients from {@link KubeSettings}: master URL first, then the kubeconfig file, then fabric8's
 * automatic configuration. Usable without OSGi.
 */
public final class KubeClientFactory {

  /** Prefix of the names of the client's task threads, so that a leaked one is recognisable. */
  public static final String THREAD_NAME_PREFIX = "nodelet-kube-";

  /** The name under which fabric8's builders add {@code io.fabric8.kubernetes.client.http.HttpLoggingInterceptor}. */
  static final String HTTP_LOGGING_INTERCEPTOR = "HttpLogging";

  private final AtomicInteger clients = new AtomicInteger();

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
    return config;
  }

  /**
   * A new client for these settings; the caller closes it, which also ends its threads.
   *
   * @throws InvalidSettingException as {@link #clientConfig(KubeSettings)}
   */
  public KubernetesClient create(KubeSettings settings) {
    return new KubernetesClientBuilder()
        .withConfig(clientConfig(settings))
        // explicit, so no ServiceLoader lookup decides which HTTP client is used
        .withHttpClientFactory(new JdkHttpClientFactory())
        // fabric8 adds this interceptor whenever its logger is at TRACE: it logs request and response bodies and
        // headers, so Secret data and bearer tokens. Nodelet never lets it in, whatever the logging configuration.
        .withHttpClientBuilderConsumer(builder -> builder.addOrReplaceInterceptor(HTTP_LOGGING_INTERCEPTOR, null))
        .withTaskExecutorSupplier(new NamedExecutorSupplier(THREAD_NAME_PREFIX + clients.incrementAndGet()))
        .build();
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

  /** One cached pool per client with recognisable daemon threads, shut down when the client closes. */
  private static final class NamedExecutorSupplier implements KubernetesClientBuilder.ExecutorSupplier {
    private final String prefix;
    private final AtomicInteger threads = new AtomicInteger();

    NamedExecutorSupplier(String prefix) {
      this.prefix = prefix;
    }

    @Override
    public Executor get() {
      ThreadFactory factory = runnable -> {
        Thread thread = new Thread(runnable, prefix + "-task-" + threads.incrementAndGet());
        thread.setDaemon(true);
        return thread;
      };
      return Executors.newCachedThreadPool(factory);
    }

    @Override
    public void onClose(Executor executor) {
      ((ExecutorService) executor).shutdownNow();
    }
  }
}
