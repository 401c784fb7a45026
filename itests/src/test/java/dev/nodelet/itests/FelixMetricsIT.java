package dev.nodelet.itests;

import static dev.nodelet.itests.MetricsScrape.hasSamples;
import static dev.nodelet.itests.MetricsScrape.text;
import static dev.nodelet.itests.MetricsScrape.value;
import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import dev.nodelet.objectcache.ConfigMapManager;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
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
 * The feature {@code nodelet} with {@code nodelet-metrics} in Felix: one scrape finds the families of every bundle,
 * their values move as the test changes the world, a driver bundle's metrics come and go with it, and no Secret's
 * name or value ever appears.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(ForkedTestContainerFactory.class)
public class FelixMetricsIT extends NodeletTestSupport {

  private static final String NS = "default";
  private static final String SECRET_VALUE = "metrics-itest-s3cr3t";

  @Configuration
  public Option[] configuration() {
    List<Option> options = new ArrayList<>(List.of(felixOptions()));
    options.addAll(featureOptions("nodelet-metrics"));
    return options.toArray(Option[]::new);
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private Bundle bundle(String name) {
    for (Bundle bundle : bundleContext.getBundles()) {
      if (name.equals(bundle.getSymbolicName())) {
        return bundle;
      }
    }
    throw new AssertionError("bundle " + name + " is not installed");
  }

  @Test
  public void everyBundleContributesItsFamiliesAndTheyMoveWithTheWorld() throws Exception {
    int port = freePort();
    try (Tracked<ConfigurationAdmin> admin = track(ConfigurationAdmin.class, null);
        Tracked<KubernetesClient> clients = track(KubernetesClient.class, null);
        Tracked<ConfigMapManager> configMaps = track(ConfigMapManager.class, null)) {
      admin.await().getConfiguration(KUBE_PID, "?").update(new Hashtable<>(Map.of(
          "master.url", System.getProperty(API_SERVER_URL_PROPERTY), "node.name", NODE_NAME)));
      admin.await().getConfiguration("dev.nodelet.metrics", "?").update(new Hashtable<>(Map.of("port", port)));
      KubernetesClient client = await().atMost(WAIT).until(clients::await,
          c -> c.getConfiguration().getMasterUrl().startsWith(System.getProperty(API_SERVER_URL_PROPERTY)));
      client.configMaps().inNamespace(NS).resource(new ConfigMapBuilder().withNewMetadata().withName("metrics-cm")
          .endMetadata().addToData("v", "1").build()).create();
      client.secrets().inNamespace(NS).resource(new SecretBuilder().withNewMetadata().withName("metrics-secret")
          .endMetadata().addToStringData("token", SECRET_VALUE).build()).create();
      client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("metrics-pod").endMetadata()
          .withNewSpec().withNodeName(NODE_NAME).addNewContainer().withName("c").withImage("busybox")
          .addNewEnvFrom().withNewConfigMapRef().withName("metrics-cm").endConfigMapRef().endEnvFrom()
          .addNewEnvFrom().withNewSecretRef().withName("metrics-secret").endSecretRef().endEnvFrom()
          .endContainer().endSpec().build()).create();

      String pods = "nodelet_manager_registered_pods{resource=\"configmaps\"}";
      await().atMost(WAIT).ignoreException(UncheckedIOException.class).until(() -> value(port, pods) == 1);
      await().atMost(WAIT).until(() -> configMaps.await().getConfigMap(NS, "metrics-cm") != null);
      String watches = "nodelet_store_watch_open_watches{resource=\"configmaps\"}";
      await().atMost(WAIT).until(() -> value(port, watches) == 1);

      String text = text(port);
      for (String family : List.of("rest_client_requests", "rest_client_request_duration_seconds",
          "nodelet_apiserver_requests", "nodelet_manager_registered_pods", "nodelet_manager_objects",
          "nodelet_manager_watchers", "nodelet_manager_watch_queued_events",
          "nodelet_manager_watch_queued_events_max", "nodelet_manager_slow_watchers_closed", "nodelet_manager_get_duration_seconds",
          "nodelet_store_watch_syncs", "nodelet_store_watch_open_watches", "nodelet_dra_drivers",
          "nodelet_dra_claims")) {
        assertTrue(family + " in\n" + text, hasSamples(text, family));
      }
      assertEquals(1, value(text, "nodelet_manager_registered_pods{resource=\"secrets\"}"), 0);
      assertEquals(1, value(text,
          "nodelet_manager_objects{resource=\"configmaps\",state=\"running\",strategy=\"watch\"}"), 0);
      assertFalse(text, text.contains("metrics-secret") || text.contains(SECRET_VALUE) || text.contains("token"));
      // the watch store watches through nodelet-kube's client: its watch requests are counted with the others
      assertTrue(text, value(text,
          "nodelet_apiserver_requests_total{code=\"200\",resource=\"configmaps\",verb=\"watch\"}") >= 1);

      // an update on the server moves the propagation histogram and the watch event shows in the request counts
      String delay = "nodelet_store_watch_propagation_delay_seconds_count{resource=\"configmaps\"}";
      double before = value(text, delay);
      client.configMaps().inNamespace(NS).withName("metrics-cm")
          .edit(c -> new ConfigMapBuilder(c).addToData("v", "2").build());
      await().atMost(WAIT).until(() -> value(port, delay) > (Double.isNaN(before) ? 0 : before));
      await().atMost(WAIT).until(() -> "2".equals(configMaps.await().getConfigMap(NS, "metrics-cm").getData()
          .get("v")));
      // one get in 64 is timed: the series is there, its count may still be 0
      assertFalse(Double.isNaN(value(port, "nodelet_manager_get_duration_seconds_count{resource=\"configmaps\"}")));

      // a driver bundle's metrics come with its driver and go with its bundle
      String devices = "nodelet_example_driver_devices{driver=\"metrics.itest.nodelet.dev\"}";
      admin.await().createFactoryConfiguration("dev.nodelet.driver.example", "?").update(new Hashtable<>(Map.of(
          "driver.name", "metrics.itest.nodelet.dev", "device.count", 2)));
      await().atMost(WAIT).until(() -> value(port, devices) == 2);
      await().atMost(WAIT).until(() -> value(port, "nodelet_dra_devices{driver=\"metrics.itest.nodelet.dev\"}")
          == 2);
      Bundle driver = bundle("nodelet-driver-example");
      driver.stop();
      await().atMost(WAIT).until(() -> Double.isNaN(value(port, devices)));
      driver.start();
      await().atMost(WAIT).until(() -> value(port, devices) == 2);

      // the endpoint leaves no thread and no socket when its bundle stops
      bundle("nodelet-metrics").stop();
      await().atMost(WAIT).until(() -> Thread.getAllStackTraces().keySet().stream()
          .noneMatch(t -> t.getName().startsWith("nodelet-metrics-http")));
      try {
        text(port);
        throw new AssertionError("the endpoint still answers after its bundle stopped");
      } catch (UncheckedIOException expected) {
        // refused
      }
    }
  }
}
