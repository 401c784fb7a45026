package dev.nodelet.cache.core.internal.watch;

import dev.nodelet.objectcache.WatchEvent;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** ConfigMaps, changes and a recording hub stand-in for the watch tests. */
final class Fixtures {

  private Fixtures() {
  }

  static ConfigMap configMap(String name, long resourceVersion, Map<String, String> labels) {
    return new ConfigMapBuilder().withNewMetadata().withNamespace("ns").withName(name)
        .withResourceVersion(Long.toString(resourceVersion)).withLabels(labels).endMetadata()
        .withData(Map.of("key", "value-" + resourceVersion)).build();
  }

  static ConfigMap configMap(String name, long resourceVersion) {
    return configMap(name, resourceVersion, Map.of());
  }

  static Change<ConfigMap> added(String name, long revision) {
    return new Change<>(WatchEvent.Type.ADDED, null, configMap(name, revision), revision);
  }

  /** Forgets as the hub does (stops the watcher) and records what it was asked. */
  static final class RecordingOwner implements CacheWatcher.Owner<ConfigMap> {
    final List<Boolean> forgotten = new ArrayList<>();
    int unresponsive;

    @Override
    public synchronized void forget(CacheWatcher<ConfigMap> watcher, boolean drain) {
      forgotten.add(drain);
      watcher.stop(drain);
    }

    @Override
    public synchronized void unresponsive(CacheWatcher<ConfigMap> watcher) {
      unresponsive++;
    }
  }
}
