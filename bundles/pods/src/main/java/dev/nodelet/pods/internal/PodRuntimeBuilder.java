package dev.nodelet.pods.internal;

import dev.nodelet.objectcache.ConfigMapManager;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.SecretManager;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchOptions;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.osgi.framework.BundleContext;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * Wires a pods' runtime: its executor, its delivery of ConfigMaps, Secrets and devices, its images, its events, and
 * the managers' watches it follows. The one place this wiring lives: the component builds its runtimes here, and so
 * do the benchmarks (which share this package on their class path) and the tests.
 */
final class PodRuntimeBuilder {

  private final BundleContext context;
  private final KubernetesClient client;
  private final String nodeName;
  private final ConfigurationAdmin admin;
  private BiFunction<String, String, ConfigMap> configMap;
  private BiFunction<String, String, Secret> secret;
  private Function<WatchOptions<ConfigMap>, Watch<ConfigMap>> configMapWatch;
  private Function<WatchOptions<Secret>, Watch<Secret>> secretWatch;
  private Path work;
  private ImageSource images; // null: from localRepository only
  private Path localRepository; // null: none
  private PodDevices devices = PodDevices.none();
  private SecretValues secretValues; // null: values are not handed to the containers' configurations
  private PodApi api;
  private Clock clock = Clock.systemUTC();
  private int capacity = 110;

  /**
   * @param context the framework the pods' bundles are installed in
   * @param client the client of status writes and events
   * @param nodeName this node's name
   * @param admin the Configuration Admin the containers' configurations go to
   */
  PodRuntimeBuilder(BundleContext context, KubernetesClient client, String nodeName, ConfigurationAdmin admin) {
    this.context = context;
    this.client = client;
    this.nodeName = nodeName;
    this.admin = admin;
  }

  /** The managers of the component's services, which the pods are registered with. */
  PodRuntimeBuilder managers(ConfigMapManager configMaps, SecretManager secrets) {
    return objects(configMaps::getConfigMap, configMaps::watch, secrets::getSecret, secrets::watch);
  }

  /** Managers of cache-core, which the pods are registered with. */
  PodRuntimeBuilder managers(ObjectManager<ConfigMap> configMaps, ObjectManager<Secret> secrets) {
    return objects(configMaps::get, configMaps::watch, secrets::get, secrets::watch);
  }

  private PodRuntimeBuilder objects(BiFunction<String, String, ConfigMap> configMap,
      Function<WatchOptions<ConfigMap>, Watch<ConfigMap>> configMapWatch, BiFunction<String, String, Secret> secret,
      Function<WatchOptions<Secret>, Watch<Secret>> secretWatch) {
    this.configMap = configMap;
    this.configMapWatch = configMapWatch;
    this.secret = secret;
    this.secretWatch = secretWatch;
    return this;
  }

  /** The work folder: the pods' volumes, and the images downloaded. */
  PodRuntimeBuilder work(Path work) {
    this.work = work;
    return this;
  }

  /** Where images come from; without, only from the {@link #localRepository} folder. */
  PodRuntimeBuilder images(ImageSource images) {
    this.images = images;
    return this;
  }

  /** The local Maven repository folder images come from, when no {@link #images} are given. */
  PodRuntimeBuilder localRepository(Path localRepository) {
    this.localRepository = localRepository;
    return this;
  }

  /** The containers' devices; without, none. */
  PodRuntimeBuilder devices(PodDevices devices) {
    this.devices = devices;
    return this;
  }

  /** The Configuration Admin plugin that hands Secret values to the containers' configurations. */
  PodRuntimeBuilder secretValues(SecretValues secretValues) {
    this.secretValues = secretValues;
    return this;
  }

  /** The API the runtime writes pods' status through; without, the client's. */
  PodRuntimeBuilder api(PodApi api) {
    this.api = api;
    return this;
  }

  PodRuntimeBuilder clock(Clock clock) {
    this.clock = clock;
    return this;
  }

  /** The pods this node takes when the node does not say. */
  PodRuntimeBuilder capacity(int capacity) {
    this.capacity = capacity;
    return this;
  }

  /** @return a runtime that does not follow the managers' watches: {@link PodRuntime#objectChanged} is its caller's */
  PodRuntime build() {
    Objects.requireNonNull(configMap, "no managers: call managers(...) before build()");
    Objects.requireNonNull(work, "no work folder: call work(...) before build()");
    ObjectLookup lookup = new ObjectLookup() {
      @Override
      public ConfigMap configMap(String namespace, String name) {
        return configMap.apply(namespace, name);
      }

      @Override
      public Secret secret(String namespace, String name) {
        return secret.apply(namespace, name);
      }
    };
    ImageSource source = images != null ? images
        : new ImageSource(localRepository, List.of(), List.of(), List.of(), work.resolve("downloads"));
    ConfigDelivery delivery = secretValues != null ? new ConfigDelivery(admin, secretValues)
        : new ConfigDelivery(admin);
    ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
      Thread thread = new Thread(r, "nodelet-pods");
      thread.setDaemon(true);
      return thread;
    });
    executor.setRemoveOnCancelPolicy(true);
    return new PodRuntime(context, api != null ? api : new KubePodApi(client),
        new PodDelivery(lookup, delivery, work, devices), source, clock, executor, nodeName, capacity,
        new PodEvents(client, nodeName, clock));
  }

  /** @return a runtime that follows the managers' watches of the objects its pods reference */
  Following start() {
    PodRuntime runtime = build();
    ObjectWatches watches = new ObjectWatches();
    watches.<ConfigMap>follow(false, configMapWatch, runtime::objectChanged);
    watches.<Secret>follow(true, secretWatch, runtime::objectChanged);
    return new Following(runtime, watches);
  }

  /** A runtime and the watches that tell it which referenced object changed; closing ends both, watches first. */
  record Following(PodRuntime runtime, ObjectWatches watches) implements AutoCloseable {
    @Override
    public void close() {
      watches.close();
      runtime.close();
    }
  }
}
