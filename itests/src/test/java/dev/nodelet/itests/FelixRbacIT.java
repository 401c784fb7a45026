package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.nodelet.objectcache.ConfigMapManager;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.SecretManager;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.ExamFactory;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.forked.ForkedTestContainerFactory;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * All of Nodelet in Felix with a client limited to the ClusterRole of {@code docs/deploy/rbac.yaml}: the three store
 * strategies serve this node's ConfigMaps and Secrets and the example DRA driver's devices are published, updated and
 * withdrawn, without a single request the role refuses; every write is to a ResourceSlice of this node, and the
 * slice of another node is never touched.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(ForkedTestContainerFactory.class)
public class FelixRbacIT extends NodeletTestSupport {

  private static final String TOKEN = "nodelet-itest-token";
  private static final String USER = "system:serviceaccount:nodelet-system:nodelet";
  private static final String KUBECONFIG_PROPERTY = "nodelet.itest.kubeconfig";
  private static final String NS = "default";
  private static final String OTHER_NODE = "other-node";
  private static final String OTHER_SLICE = "other-node-slice";
  private static final String DRIVER = "example.nodelet.dev";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @Configuration
  public Option[] configuration() {
    Properties build = build();
    ApiServerFixture server = ApiServerFixture.startLimitedTo(Path.of(build.getProperty("rbac.manifest")),
        "nodelet", TOKEN, USER);
    try (KubernetesClient admin = server.newClient()) {
      seed(admin);
    }
    server.clearRecords(); // from here on, every request with the token is Nodelet's (or this test's)
    Path kubeconfig = server.writeKubeconfig(Path.of(build.getProperty("build.directory"), "rbac-it",
        "kubeconfig"), TOKEN);
    List<Option> options = new ArrayList<>(List.of(felixOptions(server)));
    options.add(systemProperty(KUBECONFIG_PROPERTY).value(kubeconfig.toString()));
    return options.toArray(Option[]::new);
  }

  /** This node's pods with the objects they reference, and a pod and a slice of another node. */
  private static void seed(KubernetesClient admin) {
    ApiServerFixture.seedPodP1(admin);
    admin.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("elsewhere").endMetadata()
        .withNewSpec().withNodeName(OTHER_NODE).addNewContainer().withName("c").withImage("busybox")
        .addNewEnvFrom().withNewSecretRef().withName("s-a").endSecretRef().endEnvFrom().endContainer()
        .endSpec().build()).create();
    // the same driver on another node: Nodelet must neither update nor delete it
    admin.resources(ResourceSlice.class).resource(new ResourceSliceBuilder().withNewMetadata().withName(OTHER_SLICE)
        .endMetadata().withNewSpec().withNodeName(OTHER_NODE).withDriver(DRIVER)
        .withNewPool().withName("example").withGeneration(1L).withResourceSliceCount(1L).endPool()
        .addNewDevice().withName("dev-0").endDevice().endSpec().build()).create();
  }

  @Test
  public void nodeletNeedsNoMoreThanItsClusterRoleAndWritesOnlyItsOwnSlices() throws Exception {
    String otherSliceVersion = otherSliceVersion();
    try (Tracked<ConfigurationAdmin> admin = track(ConfigurationAdmin.class, null);
        Tracked<KubernetesClient> clients = track(KubernetesClient.class, null);
        Tracked<ConfigMapManager> configMaps = track(ConfigMapManager.class, null);
        Tracked<SecretManager> secrets = track(SecretManager.class, null)) {
      ConfigurationAdmin configurationAdmin = admin.await();
      // withdrawing the driver deletes its slices within the test; two devices per slice, so growing the pool
      // both updates and creates slices
      configurationAdmin.getConfiguration("dev.nodelet.dra", "?").update(new Hashtable<>(Map.of(
          "grace.period.seconds", 1, "max.devices.per.slice", 2)));
      configurationAdmin.getConfiguration(KUBE_PID, "?").update(new Hashtable<>(Map.of(
          "kubeconfig.path", System.getProperty(KUBECONFIG_PROPERTY), "node.name", NODE_NAME)));
      KubernetesClient client = await().atMost(WAIT).until(clients::await,
          c -> TOKEN.equals(c.getConfiguration().getAutoOAuthToken())
              || TOKEN.equals(c.getConfiguration().getOauthToken()));

      for (String strategy : List.of("watch", "ttl", "get")) {
        for (String pid : List.of("dev.nodelet.configmap", "dev.nodelet.secret")) {
          configurationAdmin.getConfiguration(pid, "?").update(new Hashtable<>(Map.of(
              "strategy.target", "(nodelet.strategy=" + strategy + ")")));
        }
        await().atMost(WAIT).until(() -> strategies().equals(Set.of(strategy)));
        // the first gets may come before the pod source has registered the pod
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
          assertEquals("cm-a", configMaps.await().getConfigMap(NS, "cm-a").getData().get("v"));
          assertEquals("cm-b", configMaps.await().getConfigMap(NS, "cm-b").getData().get("v"));
          assertEquals(base64("s-a"), secrets.await().getSecret(NS, "s-a").getData().get("v"));
          assertEquals(base64("s-pull"), secrets.await().getSecret(NS, "s-pull").getData().get("v"));
        });
      }

      org.osgi.service.cm.Configuration driver =
          configurationAdmin.createFactoryConfiguration("dev.nodelet.driver.example", "?");
      driver.update(new Hashtable<>(Map.of("driver.name", DRIVER, "device.count", 3)));
      await().atMost(WAIT).until(() -> devicesPerSlice(client), List.of(1, 2)::equals);
      driver.update(new Hashtable<>(Map.of("driver.name", DRIVER, "device.count", 5)));
      await().atMost(WAIT).until(() -> devicesPerSlice(client), List.of(1, 2, 2)::equals);
      driver.delete();
      await().atMost(WAIT).until(() -> devicesPerSlice(client), List.of()::equals);

      assertEquals("requests the ClusterRole refused", List.of(), observe("denied"));
      List<Map<String, Object>> writes = observe("writes");
      Set<String> verbs = new TreeSet<>();
      for (Map<String, Object> write : writes) {
        assertEquals("written resource of " + write, "resourceslices", write.get("resource"));
        if (!Integer.valueOf(404).equals(write.get("status"))) {
          // a delete of a slice gone already (404) wrote nothing and has no slice to name a node
          assertEquals("nodeName of " + write, NODE_NAME, write.get("nodeName"));
        }
        assertTrue("a write to another node's slice: " + write, !OTHER_SLICE.equals(write.get("name")));
        verbs.add((String) write.get("verb"));
      }
      assertEquals(Set.of("CREATE", "UPDATE", "DELETE"), verbs);
      assertEquals("the other node's slice is as it was", otherSliceVersion, otherSliceVersion());

      // the limit is real: the same client may not write anything else
      try {
        client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("nope").endMetadata()
            .build()).create();
        throw new AssertionError("the limited client created a pod");
      } catch (KubernetesClientException e) {
        assertEquals(403, e.getCode());
      }
      List<Map<String, Object>> denied = observe("denied");
      assertEquals(1, denied.size());
      assertEquals(USER, denied.get(0).get("user"));
      assertEquals("pods", denied.get(0).get("resource"));
    }
  }

  private static String base64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  /** The strategies the ConfigMap and Secret managers use now ("built-in" for a manager's own get). */
  private Set<String> strategies() throws Exception {
    Set<String> strategies = new TreeSet<>();
    for (ServiceReference<ObjectManager> reference : bundleContext.getServiceReferences(ObjectManager.class, null)) {
      try {
        ObjectManager<?> manager = bundleContext.getService(reference);
        strategies.add(manager.builtInStrategy() ? "built-in" : manager.strategy());
      } finally {
        bundleContext.ungetService(reference);
      }
    }
    return strategies;
  }

  /** The device counts of this node's slices, ascending, as Nodelet's own (limited) client lists them. */
  private static List<Integer> devicesPerSlice(KubernetesClient client) {
    return client.resources(ResourceSlice.class).withField("spec.nodeName", NODE_NAME).list().getItems().stream()
        .map(s -> s.getSpec().getDevices().size()).sorted().collect(Collectors.toList());
  }

  /** The resourceVersion of the other node's slice, read without a token. */
  private static String otherSliceVersion() throws Exception {
    Map<?, ?> slice = JSON.readValue(get("/apis/resource.k8s.io/v1/resourceslices/" + OTHER_SLICE), Map.class);
    return (String) ((Map<?, ?>) slice.get("metadata")).get("resourceVersion");
  }

  /** What the embedded API server (in the test JVM) recorded: {@code writes} or {@code denied}. */
  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> observe(String what) throws Exception {
    return JSON.readValue(get("/nodelet-testing/" + what), List.class);
  }

  private static String get(String path) throws Exception {
    HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(
        System.getProperty(API_SERVER_URL_PROPERTY) + path)).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(path + ": " + response.body(), 200, response.statusCode());
    return response.body();
  }
}
