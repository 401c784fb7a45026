package dev.nodelet.store.ttl.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.testing.MutableClock;
import dev.nodelet.objectcache.testing.RecordingListener;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The TTL strategy rules of docs/kubernetes-rules.md against the embedded API server, with a clock the test moves. */
class TtlObjectStoreTest {

  private static final Duration TTL = Duration.ofMinutes(1);

  private final MutableClock clock = new MutableClock();
  private final RecordingListener<ConfigMap> listener = new RecordingListener<>();
  /** The query of every GET of a single ConfigMap this client sent. */
  private final List<String> getQueries = new CopyOnWriteArrayList<>();
  private EmbeddedApiServer server;
  private KubernetesClient client;
  private TtlObjectStore<ConfigMap> store;

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    client = recordingClient(server);
    store = new TtlObjectStore<>(client, ResourceType.CONFIG_MAPS, clock, () -> TTL, listener,
        new TtlMetrics());
  }

  private KubernetesClient recordingClient(EmbeddedApiServer target) {
    Interceptor recorder = new Interceptor() {
      @Override
      public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        String path = request.uri().getPath();
        if ("GET".equals(request.method()) && path.startsWith("/api/v1/namespaces/ns/configmaps/")) {
          getQueries.add(String.valueOf(request.uri().getQuery()));
        }
      }
    };
    return new KubernetesClientBuilder().withConfig(target.clientConfig())
        .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("recorder", recorder)).build();
  }

  @AfterEach
  void stop() {
    store.close();
    client.close();
    server.close();
  }

  private ConfigMap put(EmbeddedApiServer target, String name, String value) {
    try (KubernetesClient writer = target.newClient()) {
      return writer.configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
          .endMetadata().addToData("k", value).build()).createOr(e -> e.update());
    }
  }

  private ConfigMap put(String name, String value) {
    return put(server, name, value);
  }

  /** Creates or updates ConfigMap {@code name} and has pod-1 reference it, as a pod's registration does. */
  private void putReferenced(String name, String value) {
    put(name, value);
    store.addReference("ns", name, "pod-1");
  }

  private String value(String name) {
    return store.get("ns", name).getData().get("k");
  }

  private int fetches() {
    return getQueries.size();
  }

  @Test
  void referencesAreCountedAndNeverGoNegative() {
    putReferenced("a", "1");
    store.addReference("ns", "a", "pod-2");
    store.deleteReference("ns", "a", "pod-1");
    assertThat(value("a")).isEqualTo("1");
    store.deleteReference("ns", "a", "pod-2");
    assertThatThrownBy(() -> store.get("ns", "a"))
        .isInstanceOf(NotRegisteredException.class)
        .hasMessage("object \"ns\"/\"a\" not registered");
    store.deleteReference("ns", "a", "pod-2");
    store.addReference("ns", "a", "pod-3");
    assertThat(value("a")).isEqualTo("1");
    store.deleteReference("ns", "a", "pod-3");
    assertThatThrownBy(() -> store.get("ns", "a")).isInstanceOf(NotRegisteredException.class);
  }

  @Test
  void aCopyIsFreshStrictlyBeforeItsTtlEnds() {
    putReferenced("a", "1");
    assertThat(value("a")).isEqualTo("1");
    put("a", "2");
    clock.advance(TTL.minusMillis(1));
    assertThat(value("a")).isEqualTo("1");
    assertThat(fetches()).isEqualTo(1);
    clock.advance(Duration.ofMillis(1));
    assertThat(value("a")).isEqualTo("2");
    assertThat(fetches()).isEqualTo(2);
  }

  @Test
  void aRefetchAsksTheApiServerCacheAndAnAddedReferenceInvalidates() {
    putReferenced("a", "1");
    value("a");
    clock.advance(TTL);
    value("a");
    store.addReference("ns", "a", "pod-2");
    value("a");
    value("a");
    assertThat(getQueries).containsExactly("null", "resourceVersion=0", "null");
  }

  @Test
  void notFoundReplacesTheCopyAndIsAskedAgainOnEveryGet() {
    putReferenced("a", "1");
    assertThat(value("a")).isEqualTo("1");
    client.configMaps().inNamespace("ns").withName("a").delete();
    clock.advance(TTL);
    assertThatThrownBy(() -> store.get("ns", "a"))
        .isInstanceOf(ObjectNotFoundException.class)
        .hasMessage("configmaps \"a\" not found");
    assertThatThrownBy(() -> store.get("ns", "a")).isInstanceOf(ObjectNotFoundException.class);
    assertThat(fetches()).isEqualTo(3);
    put("a", "2");
    assertThat(value("a")).isEqualTo("2");
  }

  @Test
  void theListenerHearsWhatEachFetchFinds() {
    String v1 = put("a", "1").getMetadata().getResourceVersion();
    store.addReference("ns", "a", "pod-1");
    value("a");
    value("a"); // fresh: no fetch, nothing to tell
    assertThat(listener.take()).containsExactly("changed ns/a@" + v1);

    String v2 = put("a", "2").getMetadata().getResourceVersion();
    clock.advance(TTL);
    value("a");
    assertThat(listener.take()).containsExactly("changed ns/a@" + v2);

    clock.advance(TTL);
    server.failNext(Verb.GET, "configmaps", 1, 500);
    value("a");
    assertThat(listener.take()).as("a transient error observes nothing").isEmpty();

    client.configMaps().inNamespace("ns").withName("a").delete();
    assertThatThrownBy(() -> store.get("ns", "a")).isInstanceOf(ObjectNotFoundException.class);
    assertThat(listener.take()).containsExactly("deleted ns/a@null");
  }

  @Test
  void aTransientErrorKeepsTheOldCopyStale() {
    putReferenced("a", "1");
    assertThat(value("a")).isEqualTo("1");
    put("a", "2");
    clock.advance(TTL);
    server.failNext(Verb.GET, "configmaps", 1, 500);
    assertThat(value("a")).isEqualTo("1");
    // still stale: the next get tries again without the clock moving
    assertThat(value("a")).isEqualTo("2");
    assertThat(fetches()).isEqualTo(3);
  }

  @Test
  void anExpiredCopyIsRefreshedOnTheNextGetAndAFailedFetchIsNot() {
    putReferenced("a", "1");
    assertThat(store.staleness("ns", "a")).as("never fetched: nothing old to serve").isEmpty();
    assertThat(store.refreshedOnNextGet("ns", "a")).isFalse();
    value("a");
    assertThat(store.refreshedOnNextGet("ns", "a")).as("fresh").isFalse();

    clock.advance(TTL);
    assertThat(store.staleness("ns", "a")).hasValueSatisfying(why -> assertThat(why).startsWith("its TTL expired"));
    assertThat(store.refreshedOnNextGet("ns", "a")).as("the next get fetches").isTrue();

    server.failNext(Verb.GET, "configmaps", 1, 500);
    assertThat(value("a")).isEqualTo("1");
    assertThat(store.staleness("ns", "a"))
        .hasValueSatisfying(why -> assertThat(why).startsWith("its last fetch failed"));
    assertThat(store.refreshedOnNextGet("ns", "a")).as("a failure, whose old copy is served").isFalse();

    assertThat(value("a")).isEqualTo("1");
    assertThat(store.staleness("ns", "a")).isEmpty();
    assertThat(store.refreshedOnNextGet("ns", "a")).isFalse();
    assertThat(store.refreshedOnNextGet("ns", "unregistered")).isFalse();
  }

  @Test
  void withATtlOfZeroEveryCopyIsRefreshedOnTheNextGet() {
    store = new TtlObjectStore<>(client, ResourceType.CONFIG_MAPS, clock, () -> Duration.ZERO, listener,
        new TtlMetrics());
    putReferenced("a", "1");
    value("a");
    assertThat(store.staleness("ns", "a")).hasValueSatisfying(why -> assertThat(why).startsWith("its TTL expired"));
    assertThat(store.refreshedOnNextGet("ns", "a")).isTrue();
  }

  @Test
  void aTransientErrorWithNothingCachedIsReturnedAndNotCached() {
    putReferenced("a", "1");
    server.failNext(Verb.GET, "configmaps", 1, 503);
    assertThatThrownBy(() -> store.get("ns", "a"))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(503));
    assertThat(value("a")).isEqualTo("1");
  }

  @Test
  void anOlderVersionKeepsTheCopyStaleAndAnEqualOneReplacesIt() {
    for (int i = 0; i < 4; i++) {
      put("other" + i, "1");
    }
    ConfigMap newer = put("a", "newer");
    store.addReference("ns", "a", "pod-1");
    assertThat(value("a")).isEqualTo("newer");

    // the same address now answers from a server that lags behind (as a lagging API server cache would)
    int port = server.port();
    server.close();
    server = EmbeddedApiServer.builder().port(port).build().start();
    put("a", "older");
    clock.advance(TTL);
    assertThat(value("a")).isEqualTo("newer");
    int fetches = fetches();
    listener.take();
    assertThat(value("a")).isEqualTo("newer");
    assertThat(fetches()).as("an older version leaves the copy stale").isEqualTo(fetches + 1);
    assertThat(listener.take()).as("and is not told").isEmpty();

    for (int i = 0; i < 3; i++) {
      put("other" + i, "1");
    }
    ConfigMap equal = put("a", "equal");
    assertThat(equal.getMetadata().getResourceVersion()).isEqualTo(newer.getMetadata().getResourceVersion());
    assertThat(value("a")).isEqualTo("equal");
    assertThat(value("a")).isEqualTo("equal");
    assertThat(fetches()).isEqualTo(fetches + 2);
  }

  @Test
  void getsOfOneObjectAreSerialised() throws Exception {
    putReferenced("a", "1");
    server.delayResponses(Duration.ofMillis(300));
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<String>> gets = IntStream.range(0, 4).mapToObj(i -> pool.submit(() -> value("a")))
          .collect(Collectors.toList());
      for (Future<String> get : gets) {
        assertThat(get.get()).isEqualTo("1");
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(fetches()).isEqualTo(1);
  }
}
