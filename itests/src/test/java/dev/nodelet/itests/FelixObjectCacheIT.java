package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.ConfigMapManager;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.RegisteredPod;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.ExamFactory;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.forked.ForkedTestContainerFactory;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The ConfigMap manager in Felix with pods of this node registered through the pod source: its strategy is
 * switched by configuration and by stopping and starting the strategy bundle, while gets keep answering, no
 * registration is lost and no watch is left open on the embedded API server.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(ForkedTestContainerFactory.class)
public class FelixObjectCacheIT extends NodeletTestSupport {

  private static final String NS = "default";
  private static final String CONFIGMAP_PID = "dev.nodelet.configmap";
  private static final String WATCH_BUNDLE = "nodelet-store-watch";
  private static final String CONFIGMAPS = "(" + ObjectManager.RESOURCE_PROPERTY + "=configmaps)";

  private static final HttpClient HTTP = HttpClient.newHttpClient();


  @Configuration
  public Option[] configuration() {
    return felixOptions();
  }

  @Test
  public void strategiesSwitchWithoutLosingRegistrationsOrLeavingWatches() throws Exception {
    try (Tracked<ConfigurationAdmin> admin = track(ConfigurationAdmin.class, null);
        Tracked<KubernetesClient> clients = track(KubernetesClient.class, null);
        Tracked<ConfigMapManager> configMaps = track(ConfigMapManager.class, null);
        Tracked<ObjectManager> managers = track(ObjectManager.class, CONFIGMAPS)) {
      admin.await().getConfiguration(KUBE_PID, "?").update(new Hashtable<>(Map.of(
          "master.url", System.getProperty(API_SERVER_URL_PROPERTY), "node.name", NODE_NAME)));
      KubernetesClient client = await().atMost(WAIT).until(clients::await,
          c -> c.getConfiguration().getMasterUrl().startsWith(System.getProperty(API_SERVER_URL_PROPERTY)));
      seedPods(client);

      ObjectManager<?> manager = managers.await();
      Map<String, Integer> expected = Map.of("cm-a", 2, "cm-b", 1);
      await().atMost(WAIT).until(() -> references(manager), expected::equals);
      List<RegisteredPod> pods = manager.registeredPods();
      assertEquals("watch", manager.strategy());
      await().atMost(WAIT).until(() -> watches("cm-a") == 1 && watches("cm-b") == 1);

      // gets go on all along; none may fail
      AtomicBoolean running = new AtomicBoolean(true);
      AtomicInteger gets = new AtomicInteger();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread getter = new Thread(() -> {
        while (running.get() && failure.get() == null) {
          try {
            ConfigMap a = configMaps.await().getConfigMap(NS, "cm-a");
            if (!"1".equals(a.getData().get("v"))) {
              throw new AssertionError("cm-a served as " + a.getData());
            }
            gets.incrementAndGet();
          } catch (Throwable t) {
            failure.set(t);
          }
        }
      }, "itest-getter");
      getter.start();
      try {
        // by configuration: ttl keeps no watch
        retarget(admin.await(), "ttl");
        await().atMost(WAIT).until(manager::strategy, "ttl"::equals);
        await().atMost(WAIT).until(() -> watches("cm-a") == 0 && watches("cm-b") == 0);
        retarget(admin.await(), "watch");
        await().atMost(WAIT).until(manager::strategy, "watch"::equals);
        await().atMost(WAIT).until(() -> watches("cm-a") == 1 && watches("cm-b") == 1);

        // by the strategy bundle going away and coming back
        Bundle watchBundle = bundle(WATCH_BUNDLE);
        watchBundle.stop();
        await().atMost(WAIT).until(manager::builtInStrategy);
        await().atMost(WAIT).until(() -> watches("cm-a") == 0 && watches("cm-b") == 0);
        watchBundle.start();
        await().atMost(WAIT).until(manager::strategy, "watch"::equals);
        await().atMost(WAIT).until(() -> watches("cm-a") == 1 && watches("cm-b") == 1);
        int before = gets.get();
        await().atMost(WAIT).until(() -> gets.get() > before);
      } finally {
        running.set(false);
        getter.join(WAIT.toMillis());
      }
      if (failure.get() != null) {
        throw new AssertionError("a get failed during the switches", failure.get());
      }
      assertTrue("gets were made", gets.get() > 0);
      assertEquals(pods, manager.registeredPods());
      assertEquals(expected, references(manager));

      // the managers going away take their watches with them
      Bundle managersBundle = bundle("nodelet-managers");
      managersBundle.stop();
      try {
        await().atMost(WAIT).until(() -> watches("cm-a") == 0 && watches("cm-b") == 0);
      } finally {
        managersBundle.start();
      }
    }
  }

  private static void seedPods(KubernetesClient client) {
    for (String name : List.of("cm-a", "cm-b")) {
      client.configMaps().inNamespace(NS).resource(new ConfigMapBuilder().withNewMetadata().withName(name)
          .endMetadata().addToData("v", "1").build()).create();
    }
    client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("p1").endMetadata()
        .withNewSpec().withNodeName(NODE_NAME)
        .addNewContainer().withName("c").withImage("busybox")
        .addNewEnvFrom().withNewConfigMapRef().withName("cm-a").endConfigMapRef().endEnvFrom().endContainer()
        .addNewVolume().withName("v").withNewConfigMap().withName("cm-b").endConfigMap().endVolume()
        .endSpec().build()).create();
    client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("p2").endMetadata()
        .withNewSpec().withNodeName(NODE_NAME)
        .addNewContainer().withName("c").withImage("busybox")
        .addNewEnvFrom().withNewConfigMapRef().withName("cm-a").endConfigMapRef().endEnvFrom().endContainer()
        .endSpec().build()).create();
    // a pod of another node is none of this node's business
    client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("elsewhere").endMetadata()
        .withNewSpec().withNodeName("another-node")
        .addNewContainer().withName("c").withImage("busybox")
        .addNewEnvFrom().withNewConfigMapRef().withName("cm-b").endConfigMapRef().endEnvFrom().endContainer()
        .endSpec().build()).create();
  }

  private static void retarget(ConfigurationAdmin admin, String strategy) throws Exception {
    admin.getConfiguration(CONFIGMAP_PID, "?").update(new Hashtable<>(Map.of(
        "strategy.target", "(nodelet.strategy=" + strategy + ")")));
  }

  private static Map<String, Integer> references(ObjectManager<?> manager) {
    return manager.objects().stream()
        .collect(Collectors.toMap(CachedObject::name, CachedObject::references, Integer::sum, TreeMap::new));
  }

  /** Open watches on the embedded API server (in the test JVM) for one ConfigMap, through its HTTP view. */
  private static int watches(String name) throws Exception {
    String selector = URLEncoder.encode("metadata.name=" + name, StandardCharsets.UTF_8);
    URI uri = URI.create(System.getProperty(API_SERVER_URL_PROPERTY)
        + "/nodelet-testing/watches?resource=configmaps&fieldSelector=" + selector);
    String body = HTTP.send(HttpRequest.newBuilder(uri).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    return Integer.parseInt(body.replaceAll("\\D", ""));
  }

  private Bundle bundle(String symbolicName) {
    return Stream.of(bundleContext.getBundles()).filter(b -> b.getSymbolicName().equals(symbolicName)).findFirst()
        .orElseThrow(() -> new AssertionError("no bundle " + symbolicName));
  }
}
