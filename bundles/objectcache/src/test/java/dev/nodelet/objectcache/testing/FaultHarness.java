package dev.nodelet.objectcache.testing;

import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * What the API server fault tests of the strategies share: an embedded API server that a test stops, restarts or
 * starts late on a reserved port, {@code count} numbered ConfigMaps in namespace {@value #NS}, a pod per ConfigMap
 * that references it, and everything made closed at the end, the last made first.
 */
public final class FaultHarness implements AutoCloseable {

  public static final String NS = "faults";

  private final int count;
  private final IntFunction<KubernetesClient> nodeletClients;
  private final Resources resources = new Resources();
  private EmbeddedApiServer server;
  private KubernetesClient writer;

  /**
   * @param count how many ConfigMaps the tests use
   * @param nodeletClients the client under test for an API server on this loopback port
   */
  public FaultHarness(int count, IntFunction<KubernetesClient> nodeletClients) {
    this.count = count;
    this.nodeletClients = nodeletClients;
  }

  /** Closes {@code resource} when the harness is closed, before whatever was registered earlier. */
  public <T extends AutoCloseable> T closeLater(T resource) {
    return resources.closeLater(resource);
  }

  /** Builds and starts the API server, and a client that writes the test's objects. */
  public EmbeddedApiServer startServer(EmbeddedApiServer.Builder builder) {
    server = closeLater(builder.build().start());
    writer = closeLater(server.newClient());
    return server;
  }

  public EmbeddedApiServer server() {
    return server;
  }

  /** The client under test, for an API server at this port; closed with the harness. */
  public KubernetesClient nodeletClient(int port) {
    return closeLater(nodeletClients.apply(port));
  }

  /** A loopback port that nothing listens on (until the test starts a server there). */
  public static int unusedPort() {
    try (ServerSocket reserved = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return reserved.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static String name(int i) {
    return "cm-" + i;
  }

  /** Creates ConfigMap {@code i}; returns its resourceVersion. */
  public long create(int i) {
    return version(writer.configMaps().inNamespace(NS).resource(new ConfigMapBuilder().withNewMetadata()
        .withName(name(i)).endMetadata().addToData("k", "1").build()).create());
  }

  /** Creates every ConfigMap. */
  public void createAll() {
    for (int i = 0; i < count; i++) {
      create(i);
    }
  }

  /** Updates ConfigMap {@code i} with one request; returns its new resourceVersion. */
  public long update(int i, String value) {
    return version(writer.configMaps().inNamespace(NS).withName(name(i))
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"data\":{\"k\":\"" + value + "\"}}"));
  }

  public static long version(ConfigMap object) {
    return Long.parseLong(object.getMetadata().getResourceVersion());
  }

  /** Whether a get of every ConfigMap succeeds now. */
  public boolean allSucceed(BiFunction<String, String, ConfigMap> get) {
    for (int i = 0; i < count; i++) {
      try {
        get.apply(NS, name(i));
      } catch (RuntimeException e) {
        return false;
      }
    }
    return true;
  }

  /**
   * What {@link #unreachableUntilItAppears} measured.
   *
   * @param registeringNanos all the {@code registerPod} calls
   * @param slowestNanos the slowest of them
   * @param failedAfterMillis how long each failing get took
   * @param message the last failing get's message
   * @param recoveredMillis from the server's start to every get succeeding
   * @param afterCreatedMillis from the last object's creation to every get succeeding
   */
  public record Outage(long registeringNanos, long slowestNanos, List<Long> failedAfterMillis, String message,
      long recoveredMillis, long afterCreatedMillis) {

    @Override
    public String toString() {
      return "the registerPod calls took " + TimeUnit.NANOSECONDS.toMillis(registeringNanos) + " ms in all (slowest "
          + TimeUnit.NANOSECONDS.toMicros(slowestNanos) + " µs); gets failed after " + failedAfterMillis
          + " ms with \"" + message + "\"; every get succeeded " + recoveredMillis + " ms after the API server "
          + "appeared (" + afterCreatedMillis + " ms after the last object was created)";
    }
  }

  /**
   * With nothing listening on a reserved port, builds the manager under test with {@code managers} over the client
   * under test for that port; registers pods 0 to
   * {@code count - 1} (after one that loads the classes), gets three of their objects, hands each failure to
   * {@code check} with the name asked for, then starts the API server there, creates the objects and waits until
   * every get succeeds. The registrations together, and each failing get, must finish within {@code noWaiting}: a
   * call that waited for a fetch or for a client's retries would not.
   */
  public Outage unreachableUntilItAppears(Function<KubernetesClient, ObjectManager<ConfigMap>> managers,
      Duration noWaiting, Duration wait, BiConsumer<String, Throwable> check) {
    int port = unusedPort();
    ObjectManager<ConfigMap> manager = managers.apply(nodeletClient(port));
    manager.registerPod(pod(count));
    long[] slowest = new long[1];
    long started = System.nanoTime();
    assertTimeoutPreemptively(noWaiting, () -> {
      for (int i = 0; i < count; i++) {
        long call = System.nanoTime();
        manager.registerPod(pod(i));
        slowest[0] = Math.max(slowest[0], System.nanoTime() - call);
      }
    });
    long registering = System.nanoTime() - started;

    List<Long> failedAfter = new ArrayList<>();
    String message = null;
    for (int i = 0; i < 3; i++) {
      String name = name(i * (count / 4));
      long get = System.nanoTime();
      Throwable failure = assertTimeoutPreemptively(noWaiting, () -> catchThrowable(() -> manager.get(NS, name)));
      failedAfter.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - get));
      check.accept(name, failure);
      message = failure.getMessage();
    }

    startServer(EmbeddedApiServer.builder().port(port));
    long appeared = System.nanoTime();
    createAll();
    long created = System.nanoTime();
    await().atMost(wait).until(() -> allSucceed(manager::get));
    long done = System.nanoTime();
    return new Outage(registering, slowest[0], failedAfter, message, TimeUnit.NANOSECONDS.toMillis(done - appeared),
        TimeUnit.NANOSECONDS.toMillis(done - created));
  }

  /** Pod {@code i}, on node-1, referencing ConfigMap {@code i} in a volume. */
  public static Pod pod(int i) {
    return new PodBuilder().withNewMetadata().withNamespace(NS).withName("pod-" + i).withUid("uid-" + i)
        .endMetadata().withNewSpec().withNodeName("node-1").addNewVolume().withName("config").withNewConfigMap()
        .withName(name(i)).endConfigMap().endVolume().endSpec().build();
  }

  @Override
  public void close() throws Exception {
    resources.close();
  }
}
