package dev.nodelet.shell.gogo.internal;

import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.pods.PodsStatus;
import dev.nodelet.shell.views.ObjectViews;
import dev.nodelet.shell.views.PodViews;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchEvent;
import dev.nodelet.objectcache.WatchOptions;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.PrintStream;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.cm.Configuration;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Gogo commands on the ConfigMap and Secret managers: {@code nodelet:pods}, {@code nodelet:objects},
 * {@code nodelet:get}, {@code nodelet:strategy}, {@code nodelet:watch} and {@code nodelet:watchstats}. They show
 * names, counts, states and resource versions; Secret data only with {@code nodelet:get --show-secret}.
 * {@code nodelet:pods --bundles} shows the pods the pods component runs as bundles, when it runs.
 */
@Component(service = ObjectCacheCommands.class, property = {
    "osgi.command.scope=nodelet",
    "osgi.command.function=pods",
    "osgi.command.function=objects",
    "osgi.command.function=get",
    "osgi.command.function=strategy",
    "osgi.command.function=watch",
    "osgi.command.function=watchstats"})
public final class ObjectCacheCommands {

  static final String SHOW_SECRET = "--show-secret";
  static final String FORCE = "--force";

  /** What a shown Secret carries instead of the value of a data key. */
  static final String REDACTED = ObjectViews.REDACTED;

  private record Managed(ObjectManager<?> manager, String pid) {
  }

  /** Keyed by plural resource name, so listings come in a stable order. */
  private final Map<String, Managed> managers = new ConcurrentSkipListMap<>();
  private final KubernetesSerialization serialization = new KubernetesSerialization();
  /** The names of the strategy services there are, by service id. */
  private final Map<Long, String> strategies = new ConcurrentHashMap<>();

  @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  private volatile ConfigurationAdmin configurationAdmin;

  /** The component that runs pods as bundles; null without one (node mode pods off). */
  @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  volatile PodsStatus podsStatus;

  @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  void addManager(ObjectManager<?> manager, Map<String, Object> properties) {
    Object pid = properties.get(ObjectManager.PID_PROPERTY);
    managers.put(manager.type().plural(), new Managed(manager, pid == null ? null : pid.toString()));
  }

  void removeManager(ObjectManager<?> manager, Map<String, Object> properties) {
    managers.computeIfPresent(manager.type().plural(),
        (plural, managed) -> managed.manager() == manager ? null : managed);
  }

  // a ServiceReference, not the service: listing strategies must not activate one that no manager uses
  @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  void addStrategy(ServiceReference<StoreStrategy> reference) {
    strategyAdded((Long) reference.getProperty(Constants.SERVICE_ID),
        String.valueOf(reference.getProperty(StoreStrategy.PROPERTY)));
  }

  void removeStrategy(ServiceReference<StoreStrategy> reference) {
    strategies.remove((Long) reference.getProperty(Constants.SERVICE_ID));
  }

  void strategyAdded(long serviceId, String name) {
    strategies.put(serviceId, name);
  }

  /** {@code nodelet:pods}: every registered pod and the objects it references, per manager. */
  @Descriptor("Lists every registered pod and the objects it references, per manager")
  public String pods() {
    return ObjectViews.pods(managers());
  }

  /**
   * {@code nodelet:pods --receipts}: per pod and referenced object, the version it is served and how fresh;
   * {@code nodelet:pods --bundles}: the pods Nodelet runs as bundles.
   */
  @Descriptor("With --receipts: per pod and referenced object, the UID and resource version served, when it changed "
      + "on the API server, when Nodelet saw it, and whether it may be stale. With --bundles: the pods Nodelet runs "
      + "as bundles, per container its state, restarts, readiness, image, bundle and configuration PID")
  public String pods(@Descriptor("--receipts or --bundles") String option) {
    return switch (option) {
      case "--receipts" -> ObjectViews.receipts(managers());
      case "--bundles" -> PodViews.pods(podsStatus, null);
      default -> throw Usage.problem("pods", "unknown option " + option + ", the options are --receipts and "
          + "--bundles");
    };
  }

  /** {@code nodelet:pods --bundles <namespace>}: the pods Nodelet runs as bundles in that namespace. */
  @Descriptor("With --bundles: the pods Nodelet runs as bundles in the namespace")
  public String pods(@Descriptor("--bundles") String option, @Descriptor("namespace") String namespace) {
    if (!"--bundles".equals(option)) {
      throw Usage.wrong("pods", option, namespace);
    }
    return PodViews.pods(podsStatus, namespace);
  }

  /** {@code nodelet:pods} with other arguments: its usage. */
  @Descriptor("Prints the usage of nodelet:pods")
  public String pods(String... args) {
    throw Usage.wrong("pods", args);
  }

  /** {@code nodelet:objects}: every referenced object with its strategy, state, reference count and last access. */
  @Descriptor("Lists every referenced ConfigMap and Secret with its strategy, state, references and last access")
  public String objects() {
    return ObjectViews.objects(managers());
  }

  /** {@code nodelet:objects} with arguments: its usage. */
  @Descriptor("Prints the usage of nodelet:objects")
  public String objects(String... args) {
    throw Usage.wrong("objects", args);
  }

  /** {@code nodelet:get <configmap|secret> <namespace> <name>}: one object as YAML, Secret data redacted. */
  @Descriptor("Shows one ConfigMap or Secret as YAML, as the manager serves it; Secret data is redacted")
  public String get(@Descriptor("configmap (cm) or secret") String kind, @Descriptor("the namespace") String namespace,
      @Descriptor("the object's name") String name) {
    return show(manager(kind).manager().get(namespace, name), false);
  }

  /** {@code nodelet:get --show-secret <configmap|secret> <namespace> <name>}: one object, Secret data included. */
  @Descriptor("Shows one ConfigMap or Secret as YAML; --show-secret includes the data of a Secret")
  public String get(@Descriptor("--show-secret") String option, @Descriptor("configmap (cm) or secret") String kind,
      @Descriptor("the namespace") String namespace, @Descriptor("the object's name") String name) {
    if (!SHOW_SECRET.equals(option)) {
      throw Usage.problem("get", "unknown option " + option + ", the only option is " + SHOW_SECRET);
    }
    return show(manager(kind).manager().get(namespace, name), true);
  }

  /** {@code nodelet:get} with other arguments: its usage. */
  @Descriptor("Prints the usage of nodelet:get")
  public String get(String... args) {
    throw Usage.wrong("get", args);
  }

  /** {@code nodelet:strategy}: the strategy each manager uses now. */
  @Descriptor("Shows the strategy each manager uses now")
  public String strategy() {
    return ObjectViews.strategies(managers());
  }

  /** {@code nodelet:strategy <configmap|secret>}: the strategy one manager uses now. */
  @Descriptor("Shows the strategy one manager uses now")
  public String strategy(@Descriptor("configmap (cm) or secret") String kind) {
    return ObjectViews.strategy(manager(kind).manager());
  }

  /**
   * {@code nodelet:strategy <configmap|secret> <get|ttl|watch|...>}: writes {@code strategy.target} of the manager's
   * configuration; the manager moves once the configuration has been delivered. A name no strategy service has is
   * refused: the manager would serve with its built-in get until one came.
   */
  @Descriptor("Moves a manager to another strategy (writes strategy.target); refuses a strategy not installed")
  public String strategy(@Descriptor("configmap (cm) or secret") String kind,
      @Descriptor("get, ttl, watch or another installed strategy") String strategy)
      throws IOException {
    return strategy(kind, strategy, false);
  }

  /** {@code nodelet:strategy --force <configmap|secret> <name>}: the same for a strategy not installed yet. */
  @Descriptor("Moves a manager to a strategy even if it is not installed yet (--force)")
  public String strategy(@Descriptor("--force") String option, @Descriptor("configmap (cm) or secret") String kind,
      @Descriptor("the strategy's name") String strategy) throws IOException {
    if (!FORCE.equals(option)) {
      throw Usage.problem("strategy", "unknown option " + option + ", the only option is " + FORCE);
    }
    return strategy(kind, strategy, true);
  }

  /** {@code nodelet:strategy} with other arguments: its usage. */
  @Descriptor("Prints the usage of nodelet:strategy")
  public String strategy(String... args) {
    throw Usage.wrong("strategy", args);
  }

  private String strategy(String kind, String strategy, boolean force) throws IOException {
    Managed managed = manager(kind);
    String target = ObjectViews.strategyTarget(strategy);
    if (!force && !strategies.containsValue(strategy)) {
      throw new IllegalArgumentException("no strategy " + strategy + " is installed (installed: "
          + String.join(", ", new TreeSet<>(strategies.values())) + "); " + FORCE
          + " sets it anyway, and the manager serves with its built-in get until it is installed");
    }
    ConfigurationAdmin admin = configurationAdmin;
    if (admin == null || managed.pid() == null) {
      throw new IllegalStateException("no ConfigurationAdmin service: the strategy of "
          + managed.manager().type() + " cannot be configured");
    }
    // "?": the configuration stays visible to the manager's bundle rather than being bound to this one
    Configuration configuration = admin.getConfiguration(managed.pid(), "?");
    Dictionary<String, Object> properties = Optional.ofNullable(configuration.getProperties())
        .orElseGet(Hashtable::new);
    properties.put("strategy.target", target);
    configuration.update(properties);
    return managed.pid() + ": strategy.target=" + target;
  }

  /**
   * {@code nodelet:watch <configmap|secret>}: prints the objects the registered pods reference, then every change,
   * until interrupted (Ctrl-C).
   */
  @Descriptor("Prints the referenced objects of one kind, then every change, until Ctrl-C")
  public void watch(@Descriptor("configmap (cm) or secret") String kind) {
    watch(kind, null, null, System.out);
  }

  /** {@code nodelet:watch <configmap|secret> <namespace>}: the same for one namespace. */
  @Descriptor("Prints the referenced objects of one kind in one namespace, then every change, until Ctrl-C")
  public void watch(@Descriptor("configmap (cm) or secret") String kind,
      @Descriptor("the namespace") String namespace) {
    watch(kind, namespace, null, System.out);
  }

  /** {@code nodelet:watch <configmap|secret> <namespace> <name>}: the same for one object. */
  @Descriptor("Prints one object, then every change of it, until Ctrl-C")
  public void watch(@Descriptor("configmap (cm) or secret") String kind, @Descriptor("the namespace") String namespace,
      @Descriptor("the object's name") String name) {
    watch(kind, namespace, name, System.out);
  }

  /** {@code nodelet:watch} with other arguments: its usage. */
  @Descriptor("Prints the usage of nodelet:watch")
  public void watch(String... args) {
    throw Usage.wrong("watch", args);
  }

  /** Gogo gives each command thread its own {@code System.out}; tests give their own stream. */
  void watch(String kind, String namespace, String name, PrintStream out) {
    print(manager(kind).manager(), namespace, name, out);
  }

  /** Prints type, namespace/name and resource version of each event, never the content. */
  private static <T extends HasMetadata> void print(ObjectManager<T> manager, String namespace, String name,
      PrintStream out) {
    WatchOptions.Builder<T> options = WatchOptions.<T>builder().sendInitialEvents(true);
    if (namespace != null) {
      options.field(WatchOptions.FIELD_NAMESPACE, namespace);
    }
    if (name != null) {
      options.field(WatchOptions.FIELD_NAME, name);
    }
    try (Watch<T> watch = manager.watch(options.build())) {
      // the iterator ends when the watch ends or, with the interrupt flag kept, when the thread is interrupted
      for (WatchEvent<T> event : watch) {
        ObjectMeta metadata = event.object().getMetadata();
        out.printf("%-8s %s/%s %s%n", event.type(), metadata.getNamespace(), metadata.getName(),
            event.resourceVersion());
        out.flush();
      }
      if (!Thread.currentThread().isInterrupted()) {
        out.println("the watch ended (the manager stopped, or the output did not keep up)");
      }
    }
  }

  /** {@code nodelet:watchstats}: open watches, watches closed for not keeping up and initial events, per manager. */
  @Descriptor("Shows open watches, watches closed for not keeping up and initial events, per manager")
  public String watchstats() {
    return ObjectViews.watchStatistics(managers());
  }

  /** {@code nodelet:watchstats} with arguments: its usage. */
  @Descriptor("Prints the usage of nodelet:watchstats")
  public String watchstats(String... args) {
    throw Usage.wrong("watchstats", args);
  }

  private List<ObjectManager<?>> managers() {
    return managers.values().stream().<ObjectManager<?>>map(Managed::manager).toList();
  }

  private Managed manager(String kind) {
    Managed managed = managers.get(ObjectViews.plural(kind));
    if (managed == null) {
      throw new IllegalArgumentException("no manager of " + kind + "; available: "
          + String.join(", ", managers.keySet()));
    }
    return managed;
  }

  private String show(HasMetadata object, boolean showSecret) {
    return ObjectViews.yaml(serialization, object, showSecret);
  }

  /** A copy that names the data keys and sizes but holds no secret value. */
  static Secret redacted(Secret secret) {
    return ObjectViews.redacted(secret);
  }
}
