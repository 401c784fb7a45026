package dev.nodelet.store.watch.persistence;

import dev.nodelet.kube.KubeClients;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.persistence.Persistence;
import dev.nodelet.persistence.PersistenceOptions;
import dev.nodelet.store.watch.WatchStoreStrategy;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A Nodelet node reduced to the watch strategy with persistence, run in its own JVM so that a test can kill it
 * (SIGKILL, no shutdown hook, no commit on close). Arguments: kubeconfig, persistence directory, key file, node name,
 * namespace, then {@code configmaps/<name>} or {@code secrets/<name>} for each object that pod {@code pod-1}
 * references. Prints {@code READY} once every object was read and had time to reach the disk, then keeps watching.
 */
public final class PersistentNode {

  private PersistentNode() {
  }

  public static void main(String[] args) throws Exception {
    PersistenceOptions options = PersistenceOptions.of(Path.of(args[1]), args[3], Path.of(args[2]))
        .withCommitDelay(Duration.ofMillis(100));
    String namespace = args[4];
    KubernetesClient client = KubeClients.builder().kubeconfig(args[0]).build();
    Persistence persistence = Persistence.open(options);
    // LIST then WATCH: each sync is a LIST the test counts
    WatchStoreStrategy strategy = WatchStoreStrategy.builder(client).syncWait(Duration.ofSeconds(10))
        .reflectors(ReflectorEngine.builder(client).watchList(false).build()).persistence(persistence).build();
    ObjectStore<ConfigMap> configMaps = strategy.createStore(ResourceType.CONFIG_MAPS);
    ObjectStore<Secret> secrets = strategy.createStore(ResourceType.SECRETS);
    for (int i = 5; i < args.length; i++) {
      String[] object = args[i].split("/");
      ObjectStore<?> store = object[0].equals("secrets") ? secrets : configMaps;
      store.addReference(namespace, object[1], "pod-1");
      store.get(namespace, object[1]);
    }
    // what was read is on disk before the test may kill this process
    persistence.commit();
    System.out.println("READY");
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
