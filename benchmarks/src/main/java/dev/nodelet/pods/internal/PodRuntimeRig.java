package dev.nodelet.pods.internal;

import dev.nodelet.objectcache.ObjectManager;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import org.osgi.framework.BundleContext;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The pods' runtime as the {@code nodelet-pods} component builds it ({@link PodRuntimeBuilder}), with images from
 * a local Maven repository folder, for the benchmarks, which live outside the bundle: this class shares the bundle's
 * internal package on the benchmarks' plain class path.
 */
public final class PodRuntimeRig implements AutoCloseable {

  private final PodRuntimeBuilder.Following running;

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
    running = new PodRuntimeBuilder(context, client, node, admin).managers(configMaps, secrets)
        .localRepository(repository).work(work).start();
  }

  /** The pod source's news of a pod of this node. */
  public void podUpdated(Pod pod) {
    running.runtime().podUpdated(pod);
  }

  /** The pod left this node. */
  public void podRemoved(Pod pod) {
    running.runtime().podRemoved(pod);
  }

  /** @return true once the work queued so far is done */
  public boolean awaitIdle(Duration timeout) throws InterruptedException {
    return running.runtime().awaitIdle(timeout);
  }

  @Override
  public void close() {
    running.close();
  }
}
