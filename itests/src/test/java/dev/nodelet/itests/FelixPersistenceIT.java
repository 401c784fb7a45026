package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.ConfigMapManager;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.ObjectReceipt;
import dev.nodelet.objectcache.ObjectState;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Hashtable;
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
 * The watch and TTL strategies with {@code persistence.dir} in Felix (nodelet-persistence and H2 MVStore resolved
 * from the feature): the ConfigMap a pod references reaches the disk; then the client is pointed at an address where
 * no API server listens, the strategy and the managers start again with the new client, and the ConfigMap is still
 * served, listed as served from disk before its pod registers again, and the pod's receipt says so. For the TTL
 * strategy, pointed back at the server, the first successful fetch replaces the stored copy.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(ForkedTestContainerFactory.class)
public class FelixPersistenceIT extends NodeletTestSupport {

  private static final String NS = "default";
  private static final String CONFIGMAP_PID = "dev.nodelet.configmap";
  private static final String CONFIGMAPS = "(" + ObjectManager.RESOURCE_PROPERTY + "=configmaps)";

  @Configuration
  public Option[] configuration() {
    return felixOptions();
  }

  @Test
  public void aRestartWithoutTheApiServerServesTheStoredConfigMapMarkedFromDisk() throws Exception {
    restartWithoutTheApiServer("dev.nodelet.store.watch", "watch", "cm-p", "p-persist");
  }

  @Test
  public void aRestartOfTheTtlStrategyWithoutTheApiServerServesTheStoredConfigMapMarkedFromDisk() throws Exception {
    restartWithoutTheApiServer("dev.nodelet.store.ttl", "ttl", "cm-t", "p-ttl-persist");
    try (Tracked<ConfigurationAdmin> admin = track(ConfigurationAdmin.class, null);
        Tracked<KubernetesClient> clients = track(KubernetesClient.class, null);
        Tracked<ConfigMapManager> configMaps = track(ConfigMapManager.class, null);
        Tracked<ObjectManager> managers = track(ObjectManager.class, CONFIGMAPS)) {
      // the API server back, with the ConfigMap changed meanwhile: the first successful fetch replaces the copy
      KubernetesClient back = pointAtTheApiServer(admin, clients);
      back.configMaps().inNamespace(NS).withName("cm-t").edit(cm -> new ConfigMapBuilder(cm).addToData("v", "fresh")
          .build());
      await().atMost(WAIT).ignoreExceptions().until(() -> "ttl".equals(managers.await().strategy())
          && "fresh".equals(configMaps.await().getConfigMap(NS, "cm-t").getData().get("v")));
      ObjectManager<?> fetched = managers.await();
      assertTrue("no longer served from disk once fetched: " + fetched.objects(),
          fetched.objects().stream().filter(o -> o.name().equals("cm-t"))
              .noneMatch(o -> o.state().equals(Optional.of(ObjectState.FROM_DISK))));
    }
  }

  /**
   * The ConfigMap {@code configMap}, referenced by the pod {@code podName}, served by {@code strategy} with
   * persistence on its PID, survives a restart of the strategy and the managers whose client reaches no API server.
   */
  private void restartWithoutTheApiServer(String strategyPid, String strategy, String configMap, String podName)
      throws Exception {
    Path dir = Files.createTempDirectory("nodelet-persistence-it");
    Path key = dir.resolve("store.key");
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    Files.write(key, bytes);
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    Path store = dir.resolve("store");
    try (Tracked<ConfigurationAdmin> admin = track(ConfigurationAdmin.class, null);
        Tracked<KubernetesClient> clients = track(KubernetesClient.class, null);
        Tracked<ConfigMapManager> configMaps = track(ConfigMapManager.class, null);
        Tracked<ObjectManager> managers = track(ObjectManager.class, CONFIGMAPS)) {
      admin.await().getConfiguration(strategyPid, "?").update(new Hashtable<>(Map.of(
          "persistence.dir", store.toString(), "persistence.key.file", key.toString())));
      admin.await().getConfiguration(CONFIGMAP_PID, "?").update(new Hashtable<>(Map.of(
          "strategy.target", "(nodelet.strategy=" + strategy + ")")));
      KubernetesClient client = pointAtTheApiServer(admin, clients);
      client.configMaps().inNamespace(NS).resource(new ConfigMapBuilder().withNewMetadata().withName(configMap)
          .endMetadata().addToData("v", "kept").build()).create();
      Pod pod = client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName(podName)
          .endMetadata().withNewSpec().withNodeName(NODE_NAME)
          .addNewContainer().withName("c").withImage("busybox")
          .addNewEnvFrom().withNewConfigMapRef().withName(configMap).endConfigMapRef().endEnvFrom().endContainer()
          .endSpec().build()).create();

      await().atMost(WAIT).ignoreExceptions().until(() -> strategy.equals(managers.await().strategy())
          && "kept".equals(configMaps.await().getConfigMap(NS, configMap).getData().get("v")));
      await().atMost(WAIT).until(() -> Files.exists(store.resolve("configmaps.mv")));

      // no API server at this address: the strategy and the managers start again with the new client
      admin.await().getConfiguration(KUBE_PID, "?").update(new Hashtable<>(Map.of(
          "master.url", "http://127.0.0.1:9", "node.name", NODE_NAME)));
      await().atMost(WAIT).until(clients::await, c -> c.getConfiguration().getMasterUrl().contains(":9"));
      await().atMost(WAIT).ignoreExceptions().until(() -> strategy.equals(managers.await().strategy())
          && "kept".equals(configMaps.await().getConfigMap(NS, configMap).getData().get("v")));
      // the pod source cannot list the pods now: the object is listed, served from disk, before the pod registers
      ObjectManager<?> manager = managers.await();
      Optional<CachedObject> listed = manager.objects().stream().filter(o -> o.name().equals(configMap))
          .findFirst();
      assertTrue("the restored object is listed before its pod registers again", listed.isPresent());
      assertEquals(Optional.of(ObjectState.FROM_DISK), listed.get().state());
      // the pod registering again works as usual, and its receipt says that the copy comes from disk
      configMaps.await().registerPod(pod);
      assertEquals("kept", configMaps.await().getConfigMap(NS, configMap).getData().get("v"));
      ObjectReceipt receipt = manager.receipts().stream().filter(r -> r.name().equals(podName))
          .flatMap(r -> r.objects().stream()).findFirst().orElseThrow();
      assertTrue("the receipt says the copy served comes from disk: " + receipt, receipt.fromDisk());
      assertTrue(receipt.staleReason().orElseThrow().startsWith("served from the copy a previous run stored on disk"));
    }
  }

  private static KubernetesClient pointAtTheApiServer(Tracked<ConfigurationAdmin> admin,
      Tracked<KubernetesClient> clients) throws Exception {
    admin.await().getConfiguration(KUBE_PID, "?").update(new Hashtable<>(Map.of(
        "master.url", System.getProperty(API_SERVER_URL_PROPERTY), "node.name", NODE_NAME)));
    return await().atMost(WAIT).until(clients::await,
        c -> c.getConfiguration().getMasterUrl().startsWith(System.getProperty(API_SERVER_URL_PROPERTY)));
  }
}
