package dev.nodelet.metrics.internal;

import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.configuration.ServicePublisher;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.metatype.MetaTypeService;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves {@code /metrics} with Prometheus client_java's HTTP exporter: the text format by default, OpenMetrics when
 * the scraper's {@code Accept} header asks for it. What it serves is the whiteboard of {@link MultiCollector}
 * services: each bundle registers its own, so its metrics appear and vanish with the bundle. Its configuration goes
 * through {@link LastGoodConfiguration}: a new address or port moves it in place, an invalid one is refused naming
 * the key; with an invalid first one it listens nowhere and holds readiness until a valid one comes.
 */
@Component(configurationPid = MetricsEndpoint.PID, configurationPolicy = ConfigurationPolicy.REQUIRE,
    service = {}, immediate = true)
@Designate(ocd = MetricsConfiguration.class)
public final class MetricsEndpoint {

  public static final String PID = "dev.nodelet.metrics";
  static final String THREAD_PREFIX = "nodelet-metrics-http-";

  private static final Logger LOG = LoggerFactory.getLogger(MetricsEndpoint.class);

  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final LastGoodConfiguration<MetricsConfiguration, MetricsSettings> config;
  private final ConfigzHandler configz;
  private final BundleContext context;
  private Server server; // guarded by this; null until a valid configuration came

  @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  private volatile ConfigurationAdmin configurationAdmin;

  @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  private volatile MetaTypeService metaType;

  @Activate
  public MetricsEndpoint(BundleContext context, MetricsConfiguration config, Map<String, Object> properties) {
    this(context, ServicePublisher.of(context), config, properties, null);
  }

  /** For tests: where the health check of a waiting endpoint goes. */
  MetricsEndpoint(ServicePublisher publisher, MetricsConfiguration config) {
    this(null, publisher, config, Map.of(), null);
  }

  /**
   * @param context where the metatype of the configurations is looked up; null in tests that give {@code configz}
   * @param configz what {@code /configz} shows; null to read it from Config Admin and the metatype
   */
  MetricsEndpoint(BundleContext context, ServicePublisher publisher, MetricsConfiguration config,
      Map<String, Object> properties, ConfigzHandler.Source configz) {
    this.context = context;
    this.config = LastGoodConfiguration.waiting(PID, "the metrics endpoint", MetricsSettings::of, publisher);
    this.configz = new ConfigzHandler(configz != null ? configz : this::readConfigz);
    JvmProcessMetrics.register(registry);
    modified(config, properties);
  }

  private List<Configz.Pid> readConfigz() throws IOException {
    ConfigurationAdmin admin = configurationAdmin;
    if (admin == null || context == null) {
      throw new IllegalStateException("no Configuration Admin service");
    }
    return ConfigzSource.read(context, admin, metaType);
  }

  @Modified
  synchronized void modified(MetricsConfiguration next, Map<String, Object> properties) {
    config.apply(next, properties, settings -> {
      // the old port is given up first: a new address with the same port must be able to bind it
      if (server != null) {
        server.close();
        server = null;
      }
      server = Server.start(settings, registry, configz);
    });
  }

  @Deactivate
  synchronized void deactivate() {
    config.close();
    if (server != null) {
      server.close();
      server = null;
    }
  }

  @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
  void addCollector(MultiCollector collector) {
    registry.register(collector);
  }

  void removeCollector(MultiCollector collector) {
    registry.unregister(collector);
  }

  /** @return the warnings given for keys its configuration does not have */
  List<String> unknownKeys() {
    return config.unknownKeys();
  }

  /** @return the address the endpoint listens on */
  synchronized InetSocketAddress address() {
    if (server == null) {
      throw new IllegalStateException("the metrics endpoint waits for a valid configuration " + PID);
    }
    return server.address;
  }

  /** One running HTTP server and its threads. */
  private static final class Server {
    private final HTTPServer http;
    private final ExecutorService executor;
    private final InetSocketAddress address;

    private Server(HTTPServer http, ExecutorService executor, InetSocketAddress address) {
      this.http = http;
      this.executor = executor;
      this.address = address;
    }

    static Server start(MetricsSettings settings, PrometheusRegistry registry, ConfigzHandler configz) {
      ExecutorService executor = executor();
      try {
        // every path but /metrics comes to the default handler: /configz, or not found
        HTTPServer http = HTTPServer.builder().inetAddress(settings.address()).port(settings.port())
            .registry(registry).executorService(executor).defaultHandler(configz).buildAndStart();
        InetSocketAddress address = new InetSocketAddress(settings.address(), http.getPort());
        LOG.info("Metrics served at http://{}:{}/metrics, the effective configuration at /configz",
            settings.address().getHostAddress(), http.getPort());
        return new Server(http, executor, address);
      } catch (IOException e) {
        executor.shutdownNow();
        throw new UncheckedIOException("metrics endpoint: cannot listen on " + settings.address().getHostAddress()
            + ":" + settings.port() + " (" + e.getMessage() + "); set port and address of " + PID
            + " to a free port on an address of this host", e);
      }
    }

    /** A few daemon threads that end when idle, named so that a leak is easy to tell. */
    private static ExecutorService executor() {
      AtomicInteger count = new AtomicInteger();
      ThreadPoolExecutor executor = new ThreadPoolExecutor(2, 2, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
          task -> {
            Thread thread = new Thread(task, THREAD_PREFIX + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
          });
      executor.allowCoreThreadTimeOut(true);
      return executor;
    }

    void close() {
      http.close();
      executor.shutdownNow();
      try {
        executor.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
