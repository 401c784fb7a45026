package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.ConfigMapManager;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.ObjectState;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.ExamFactory;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.forked.ForkedTestContainerFactory;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The watch strategy's {@code max.watches} in Felix, set through Config Admin (metatype and DS as packaged): a pod
 * referencing three ConfigMaps under a budget of one holds one watch on the API server, the others are listed as
 * polled and served; a lower budget of none watches them all; an invalid value is refused and the budget in force
 * stays.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(ForkedTestContainerFactory.class)
public class FelixWatchBudgetIT extends NodeletTestSupport {

  private static final String NS = "default";
  private static final String WATCH_PID = "dev.nodelet.store.watch";
  private static final String CONFIGMAPS = "(" + ObjectManager.RESOURCE_PROPERTY + "=configmaps)";
  private static final List<String> NAMES = List.of("budget-a", "budget-b", "budget-c");

  @Configuration
  public Option[] configuration() {
    return felixOptions();
  }

  /** Open ConfigMap watches on the embedded API server (in the test JVM), through its HTTP view. */
  private static int openWatches() throws Exception {
    URI uri = URI.create(System.getProperty(API_SERVER_URL_PROPERTY) + "/nodelet-testing/watches?resource=configmaps");
    try (InputStream body = uri.toURL().openStream()) {
      return Integer.parseInt(new String(body.readAllBytes(), StandardCharsets.UTF_8).replaceAll("\\D", ""));
    }
  }

  private static long inState(ObjectManager<?> manager, ObjectState state) {
    return manager.objects().stream().filter(o -> NAMES.contains(o.name()))
        .filter(o -> o.state().equals(Optional.of(state))).count();
  }

  @Test
  public void theBudgetHoldsAndFollowsConfigAdmin() throws Exception {
    try (Tracked<ConfigurationAdmin> admin = track(ConfigurationAdmin.class, null);
        Tracked<KubernetesClient> clients = track(KubernetesClient.class, null);
        Tracked<ConfigMapManager> configMaps = track(ConfigMapManager.class, null);
        Tracked<ObjectManager> managers = track(ObjectManager.class, CONFIGMAPS)) {
      admin.await().getConfiguration(WATCH_PID, "?").update(new Hashtable<>(Map.of("max.watches", "1")));
      admin.await().getConfiguration(KUBE_PID, "?").update(new Hashtable<>(Map.of(
          "master.url", System.getProperty(API_SERVER_URL_PROPERTY), "node.name", NODE_NAME)));
      KubernetesClient client = await().atMost(WAIT).until(clients::await,
          c -> c.getConfiguration().getMasterUrl().startsWith(System.getProperty(API_SERVER_URL_PROPERTY)));
      PodBuilder pod = new PodBuilder().withNewMetadata().withName("p-budget").endMetadata().withNewSpec()
          .withNodeName(NODE_NAME).addNewContainer().withName("c").withImage("busybox").endContainer().endSpec();
      for (String name : NAMES) {
        client.configMaps().inNamespace(NS).resource(new ConfigMapBuilder().withNewMetadata().withName(name)
            .endMetadata().addToData("v", name).build()).create();
        pod.editSpec().editFirstContainer().addNewEnvFrom().withNewConfigMapRef().withName(name).endConfigMapRef()
            .endEnvFrom().endContainer().endSpec();
      }
      client.pods().inNamespace(NS).resource(pod.build()).create();

      await().atMost(WAIT).ignoreExceptions().until(() -> NAMES.stream().allMatch(name ->
          name.equals(configMaps.await().getConfigMap(NS, name).getData().get("v"))));
      ObjectManager<?> manager = managers.await();
      await().atMost(WAIT).until(() -> inState(manager, ObjectState.POLLED) == 2
          && inState(manager, ObjectState.RUNNING) == 1 && openWatches() == 1);
      for (int i = 0; i < 20; i++) {
        assertTrue("at most one ConfigMap watch", openWatches() <= 1);
        for (String name : NAMES) {
          assertEquals(name, configMaps.await().getConfigMap(NS, name).getData().get("v"));
        }
      }
      CachedObject polled = manager.objects().stream().filter(o -> NAMES.contains(o.name()))
          .filter(o -> o.state().equals(Optional.of(ObjectState.POLLED))).findFirst().orElseThrow();
      assertEquals("watch", polled.strategy());

      // refused: the budget of one stays
      admin.await().getConfiguration(WATCH_PID, "?").update(new Hashtable<>(Map.of("max.watches", "-3")));
      await().atMost(WAIT).ignoreExceptions().until(() -> NAMES.stream().allMatch(name ->
          name.equals(configMaps.await().getConfigMap(NS, name).getData().get("v"))));
      assertTrue("at most one ConfigMap watch after a refused value", openWatches() <= 1);

      // no budget: every object is watched
      admin.await().getConfiguration(WATCH_PID, "?").update(new Hashtable<>(Map.of("max.watches", "0")));
      await().atMost(WAIT).ignoreExceptions().until(() -> inState(managers.await(), ObjectState.RUNNING) == 3
          && openWatches() == 3);
    }
  }
}
