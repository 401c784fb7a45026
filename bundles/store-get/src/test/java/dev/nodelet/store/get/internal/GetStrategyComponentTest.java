package dev.nodelet.store.get.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class GetStrategyComponentTest {

  @Test
  void everyGetAsksTheApiServer() {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient()) {
      client.secrets().inNamespace("ns").resource(new SecretBuilder().withNewMetadata().withName("s").endMetadata()
          .addToData("password", "aHVudGVyMg==").build()).create();
      ObjectStore<Secret> store = new GetStrategyComponent(client).createStore(ResourceType.SECRETS);
      long gets = server.requestCount(Verb.GET, "secrets");
      assertThat(store.get("ns", "s").getData()).containsKey("password");
      assertThat(store.get("ns", "s").getData()).containsKey("password");
      assertThat(server.requestCount(Verb.GET, "secrets")).isEqualTo(gets + 2);
      assertThatThrownBy(() -> store.get("ns", "other"))
          .isInstanceOf(ObjectNotFoundException.class)
          .hasMessage("secrets \"other\" not found");
      assertThat(server.openWatches("secrets")).isZero();
    }
  }

  @Test
  void storesTellTheirListenerWhatGetsFind() {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient()) {
      client.secrets().inNamespace("ns").resource(new SecretBuilder().withNewMetadata().withName("s").endMetadata()
          .build()).create();
      List<String> heard = new ArrayList<>();
      ObjectStore<Secret> store = new GetStrategyComponent(client).createStore(ResourceType.SECRETS,
          new ObjectStore.Listener<Secret>() {
            @Override
            public void changed(Secret object) {
              heard.add("changed " + object.getMetadata().getName());
            }

            @Override
            public void deleted(String namespace, String name, String resourceVersion) {
              heard.add("deleted " + name);
            }
          });
      store.get("ns", "s");
      assertThatThrownBy(() -> store.get("ns", "other")).isInstanceOf(ObjectNotFoundException.class);
      assertThat(heard).containsExactly("changed s", "deleted other");
    }
  }
}
