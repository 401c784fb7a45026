package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Changes of referenced objects reach the runtime by name, and closing leaves no thread. */
class ObjectWatchesTest {

  private final EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
  private final KubernetesClient client = server.newClient();
  private final SwitchableObjectManager<ConfigMap> manager = ObjectManagers.configMaps(client).build();

  @AfterEach
  void close() throws Exception {
    manager.close();
    client.close();
    server.close();
  }

  @Test
  void aChangedConfigMapIsNamedAndClosingEndsTheThreads() {
    client.configMaps().inNamespace("default").resource(new ConfigMapBuilder().withNewMetadata().withName("a")
        .endMetadata().addToData("k", "1").build()).create();
    Pod pod = client.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName("p")
        .endMetadata().withNewSpec().withNodeName("n").addNewContainer().withName("c").withImage("mvn:g/a/1")
        .addNewEnvFrom().withNewConfigMapRef().withName("a").endConfigMapRef().endEnvFrom().endContainer()
        .endSpec().build()).create();
    manager.registerPod(pod);
    List<String> changed = new CopyOnWriteArrayList<>();
    ObjectWatches watches = new ObjectWatches();
    watches.<ConfigMap>follow(false, manager::watch, (secret, namespace, name) -> changed.add(namespace + "/" + name));

    manager.get("default", "a");
    client.configMaps().inNamespace("default").withName("a").edit(c -> {
      c.getData().put("k", "2");
      return c;
    });
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      manager.get("default", "a"); // the get strategy sees changes when it fetches
      assertThat(changed).contains("default/a");
    });

    watches.close();
    assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().equals("nodelet-pods-watch")
        && t.isAlive());
  }
}
