package dev.nodelet.benchmarks;

import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.cache.core.SwitchableObjectManager;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Measure 1: a cached get of a watched, synced object. Nodelet's watch strategy behind the ConfigMap manager (the
 * public {@code ObjectManager.get}), next to a fabric8 informer's store lookup and a bare {@code ConcurrentHashMap}.
 * 128 objects, read in turn.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CachedGetBenchmark {

  static final int OBJECTS = 128;

  private SyncedManager synced;
  private SwitchableObjectManager<ConfigMap> manager;
  private String[] names;
  private SharedIndexInformer<ConfigMap> informer;
  private final ConcurrentHashMap<String, ConfigMap> map = new ConcurrentHashMap<>();
  private final String[] keys = new String[OBJECTS];
  private int next;

  @Setup(Level.Trial)
  public void setUp() {
    synced = new SyncedManager(OBJECTS, false);
    manager = synced.manager;
    names = synced.names;
    for (int i = 0; i < OBJECTS; i++) {
      keys[i] = Cache.namespaceKeyFunc(Fixtures.NAMESPACE, names[i]);
      map.put(keys[i], manager.get(Fixtures.NAMESPACE, names[i]));
    }
    // after the watch strategy's lists: the JDK 17 HttpClient fails requests beyond the server's HTTP/2 stream limit
    informer = synced.client.configMaps().inNamespace(Fixtures.NAMESPACE).inform();
    for (int i = 0; i < OBJECTS; i++) {
      if (informer.getStore().getByKey(keys[i]) == null) {
        throw new IllegalStateException("the informer has not synced " + keys[i]);
      }
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    informer.close();
    synced.close();
  }

  private int nextIndex() {
    int i = next;
    next = (i + 1) & (OBJECTS - 1);
    return i;
  }

  /** {@code ObjectManager.get(namespace, name)} with the watch strategy. */
  @Benchmark
  public ConfigMap nodeletGet() {
    return manager.get(Fixtures.NAMESPACE, names[nextIndex()]);
  }

  /** A fabric8 informer: the key from namespace and name, then the store lookup (what a lister does). */
  @Benchmark
  public ConfigMap informerStoreGet() {
    return informer.getStore().getByKey(Cache.namespaceKeyFunc(Fixtures.NAMESPACE, names[nextIndex()]));
  }

  /** The floor: {@code ConcurrentHashMap.get} with a precomputed key. */
  @Benchmark
  public ConfigMap bareMapGet() {
    return map.get(keys[nextIndex()]);
  }
}
