package dev.nodelet.cache.core;

import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.objectcache.testing.RecordingListener;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class GetStrategyTest {

  private EmbeddedApiServer server;
  private KubernetesClient client;
  private ObjectStore<ConfigMap> store;

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    client = server.newClient();
    store = new GetStrategy(client).createStore(ResourceType.CONFIG_MAPS);
  }

  @AfterEach
  void stop() {
    store.close();
    client.close();
    server.close();
  }

  private void put(String name, String value) {
    client.configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
        .endMetadata().addToData("k", value).build()).createOr(e -> e.update());
  }

  @Test
  void everyGetIsADirectGetAndReferencesAreNotTracked() {
    put("a", "1");
    long gets = server.requestCount(Verb.GET, "configmaps");
    assertThat(store.get("ns", "a").getData()).containsEntry("k", "1");
    assertThat(server.requestCount(Verb.GET, "configmaps")).isEqualTo(gets + 1);
    put("a", "2");
    store.addReference("ns", "a", "pod-1");
    store.deleteReference("ns", "a", "pod-1");
    store.deleteReference("ns", "a", "pod-2");
    gets = server.requestCount(Verb.GET, "configmaps");
    assertThat(store.get("ns", "a").getData()).containsEntry("k", "2");
    assertThat(server.requestCount(Verb.GET, "configmaps")).isEqualTo(gets + 1);
    assertThat(server.openWatches("configmaps")).isZero();
  }

  @Test
  void aMissingObjectIsNotFound() {
    assertThatThrownBy(() -> store.get("ns", "missing"))
        .isInstanceOf(ObjectNotFoundException.class)
        .hasMessage("configmaps \"missing\" not found");
  }

  @Test
  void aStoreTellsItsListenerWhatEachGetFinds() {
    RecordingListener<ConfigMap> listener = new RecordingListener<>();
    ObjectStore<ConfigMap> told = new GetStrategy(client).createStore(ResourceType.CONFIG_MAPS, listener);
    put("a", "1");
    String version = told.get("ns", "a").getMetadata().getResourceVersion();
    assertThatThrownBy(() -> told.get("ns", "missing")).isInstanceOf(ObjectNotFoundException.class);
    server.failNext(Verb.GET, "configmaps", 1, 500);
    assertThatThrownBy(() -> told.get("ns", "a")).isInstanceOf(KubernetesClientException.class);
    assertThat(listener.take()).containsExactly("changed ns/a@" + version, "deleted ns/missing@null");
  }

  @Test
  void anApiServerErrorReachesTheCaller() {
    put("a", "1");
    server.failNext(Verb.GET, "configmaps", 1, 500);
    assertThatThrownBy(() -> store.get("ns", "a"))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(500));
  }

  @Test
  void anUnreachableApiServerIsNamedAsSuch() {
    server.stop();
    // fabric8 itself says "An error has occurred."
    assertThatThrownBy(() -> store.get("ns", "a"))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageStartingWith("cannot get configmaps \"ns\"/\"a\": the API server is unreachable "
            + "(java.net.ConnectException");
  }
}
