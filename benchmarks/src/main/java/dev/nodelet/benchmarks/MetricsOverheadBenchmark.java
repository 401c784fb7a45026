package dev.nodelet.benchmarks;

import dev.nodelet.cache.core.SwitchableObjectManager;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The cost of metrics on the two hot paths: the cached get (128 synced objects read in turn, as measure 1) and
 * {@code registerPod} of a pod whose 10 ConfigMaps another pod already references (as measure 3, shared). With
 * {@code metrics=on} the manager and its watch strategy are built with a {@code ManagerMetrics} and a
 * {@code WatchStoreMetrics}, as the OSGi components build them; with {@code off}, without.
 */
@State(Scope.Benchmark)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class MetricsOverheadBenchmark {

  static final int OBJECTS = 128;

  @Param({"off", "on"})
  public String metrics;

  private SyncedManager synced;
  private SwitchableObjectManager<ConfigMap> manager;
  private String[] names;
  private Pod pod;
  private boolean registered;
  private int next;

  @Setup(Level.Trial)
  public void setUp() {
    synced = new SyncedManager(OBJECTS, "on".equals(metrics));
    manager = synced.manager;
    names = synced.names;
    pod = Fixtures.pod("measured", "uid-measured", IntStream.range(0, 10).mapToObj(Fixtures::name).toList());
  }

  @Setup(Level.Invocation)
  public void unregister() {
    if (registered) {
      manager.unregisterPod(pod);
      registered = false;
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    synced.close();
  }

  /** {@code ObjectManager.get(namespace, name)} of a watched, synced object. */
  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  public ConfigMap get() {
    int i = next;
    next = (i + 1) & (OBJECTS - 1);
    return manager.get(Fixtures.NAMESPACE, names[i]);
  }

  /** {@code registerPod} of a pod with 10 references whose watches run already; unregistered before each call. */
  @Benchmark
  @BenchmarkMode(Mode.SampleTime)
  public void registerPod() {
    manager.registerPod(pod);
    registered = true;
  }
}
