package dev.nodelet.benchmarks;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.store.watch.WatchStoreStrategy;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
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
 * Measure 3: {@code registerPod} of a pod with 10 ConfigMap references on the watch strategy, sampled (p50, p99).
 * Before each call the pod is unregistered (not measured). The API server is in-process, over TLS and HTTP/2.
 *
 * <ul>
 *   <li>{@code references=shared}: another pod references the same 10 objects, so their watches run already and
 *       registering only counts references (the common case: kube-root-ca.crt and shared config).</li>
 *   <li>{@code references=new}: the pod is the only one, so each registration starts 10 watches and each
 *       unregistration stops them.</li>
 *   <li>{@code server=unreachable}: the API server is stopped after setup (connection refused on loopback).</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class RegisterPodBenchmark {

  @Param({"reachable", "unreachable"})
  public String server;

  @Param({"shared", "new"})
  public String references;

  private EmbeddedApiServer apiServer;
  private KubernetesClient client;
  private WatchStoreStrategy strategy;
  private SwitchableObjectManager<ConfigMap> manager;
  private Pod pod;
  private boolean registered;

  @Setup(Level.Trial)
  public void setUp() {
    apiServer = EmbeddedApiServer.builder().tls().build().start();
    client = Watched.nodeletClient(apiServer);
    Fixtures.createConfigMaps(client, 0, 10);
    strategy = WatchStoreStrategy.builder(client).build();
    manager = ObjectManagers.configMaps(client).build();
    manager.useStrategy("watch", strategy);
    List<String> names = IntStream.range(0, 10).mapToObj(Fixtures::name).toList();
    if ("shared".equals(references)) {
      manager.registerPod(Fixtures.pod("holder", "uid-holder", names));
      names.forEach(n -> Fixtures.getSynced(manager, n));
    }
    pod = Fixtures.pod("measured", "uid-measured", names);
    if ("unreachable".equals(server)) {
      apiServer.stop();
    }
  }

  @Setup(Level.Invocation)
  public void unregister() {
    if (registered) {
      manager.unregisterPod(pod);
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    manager.close();
    strategy.close();
    client.close();
    apiServer.close();
  }

  @Benchmark
  public void registerPod() {
    manager.registerPod(pod);
    registered = true;
  }
}
