package dev.nodelet.pods.internal;

import dev.nodelet.objectcache.ObjectManager;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.osgi.framework.BundleContext;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The pods' runtime as the {@code nodelet-pods} component builds it (its executor, delivery, images from a local
 * Maven repository folder, events, and the managers' watch followed), for the benchmarks, which live outside the
 * bundle: this class shares the bundle's internal package on the benchmarks' plain class path.
 */
public final class PodRuntimeRig implements AutoCloseable {

  private final PodRuntime runtime;
  private final ObjectWatches watches = new ObjectWatches();

  /**
   * @param context the framework the pods' bundles are installed in
   * @param admin its Configuration Admin
   * @param client the client of status writes and events
   * @param configMaps the ConfigMap manager the pods are registered with
   * @param secrets the Secret manager
   * @param repository the local Maven repository folder images come from
   * @param work the work folder (the pods' volumes)
   * @param node this node's name
   */
  public PodRuntimeRig(BundleContext context, ConfigurationAdmin admin, KubernetesClient client,
      ObjectManager<ConfigMap> configMaps, ObjectManager<Secret> secrets, Path repository, Path work, String node) {
    ObjectLookup lookup = new ObjectLookup() {
      @Override
      public ConfigMap configMap(String namespace, String name) {
        return configMaps.get(namespace, name);
      }

      @Override
      public Secret secret(String namespace, String name) {
        return secrets.get(namespace, name);
      }
    };
    ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
      Thread thread = new Thread(r, "nodelet-pods");
      thread.setDaemon(true);
      return thread;
    });
    executor.setRemoveOnCancelPolicy(true);
    runtime = new PodRuntime(context, new KubePodApi(client),
        new PodDelivery(lookup, new ConfigDelivery(admin), work, PodDevices.none()),
        new ImageSource(repository, List.of(), List.of(), List.of(), work.resolve("downloads")), Clock.systemUTC(),
        executor, node, 110, new PodEvents(client, node, Clock.systemUTC()));
    watches.<ConfigMap>follow(false, configMaps::watch, runtime::objectChanged);
    watches.<Secret>follow(true, secrets::watch, runtime::objectChanged);
  }

  /** The pod source's news of a pod of this node. */
  public void podUpdated(Pod pod) {
    runtime.podUpdated(pod);
  }

  /** The pod left this node. */
  public void podRemoved(Pod pod) {
    runtime.podRemoved(pod);
  }

  /** @return true once the work queued so far is done */
  public boolean awaitIdle(Duration timeout) throws InterruptedException {
    return runtime.awaitIdle(timeout);
  }

  @Override
  public void close() {
    watches.close();
    runtime.close();
  }
}
