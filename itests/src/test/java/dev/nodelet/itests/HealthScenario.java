package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.nodelet.kube.KubeClients;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Base64;
import java.util.Hashtable;
import java.util.Map;
import org.osgi.framework.BundleContext;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.condition.Condition;

/**
 * The health endpoint of {@code nodelet-health} scraped over HTTP while the world changes, in whichever framework the
 * test runs (Felix or Karaf): ready with every check passing and the receipts naming the versions served; an update
 * on the API server shows in the receipts; the API server taken away (a proxy in front of it stopped) turns
 * readiness, the cache-sync condition and the receipts stale while liveness stays up; back again, everything
 * recovers. No Secret value appears anywhere.
 */
final class HealthScenario {

  private static final String NS = "default";
  private static final String SECRET_VALUE = "health-itest-secret-Zp3Vq";
  private static final String CACHES_SYNCED = "(" + Condition.CONDITION_ID + "=nodelet.caches.synced)";
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final java.time.Duration WAIT = java.time.Duration.ofSeconds(60);

  private HealthScenario() {
  }

  static void run(BundleContext bundleContext, ConfigurationAdmin configurationAdmin) throws Exception {

    URI api = URI.create(System.getProperty(NodeletTestSupport.API_SERVER_URL_PROPERTY));
    int healthPort;
    try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      healthPort = free.getLocalPort();
    }
    String health = "http://127.0.0.1:" + healthPort;
    try (TcpProxy proxy = new TcpProxy(api.getHost(), api.getPort()).start();
        KubernetesClient direct = KubeClients.builder().masterUrl(api.toString()).build()) {
      configurationAdmin.getConfiguration(NodeletTestSupport.KUBE_PID, "?").update(new Hashtable<>(Map.of(
          "master.url", "http://127.0.0.1:" + proxy.port(), "node.name", NodeletTestSupport.NODE_NAME)));
      configurationAdmin.getConfiguration("dev.nodelet.health", "?").update(new Hashtable<>(Map.of(
          "port", healthPort)));

      ConfigMap created = direct.configMaps().inNamespace(NS).resource(new ConfigMapBuilder().withNewMetadata()
          .withName("app-config").endMetadata().addToData("mode", "fast").build()).create();
      direct.secrets().inNamespace(NS).resource(new SecretBuilder().withNewMetadata().withName("app-secret")
          .endMetadata().addToStringData("password", SECRET_VALUE).build()).create();
      direct.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("app").endMetadata()
          .withNewSpec().withNodeName(NodeletTestSupport.NODE_NAME)
          .addNewContainer().withName("c").withImage("busybox").endContainer()
          .addNewVolume().withName("c").withNewConfigMap().withName("app-config").endConfigMap().endVolume()
          .addNewVolume().withName("s").withNewSecret().withSecretName("app-secret").endSecret().endVolume()
          .endSpec().build()).create();

      // ready: every check passes, the receipts name the version created
      await().atMost(WAIT).until(() -> get(health + "/readyz").statusCode() == 200);
      String ready = get(health + "/readyz?verbose").body();
      assertTrue(ready, ready.contains("[+]nodelet-apiserver ok") && ready.contains("[+]nodelet-cache-sync ok")
          && ready.contains("[+]nodelet-node ok") && ready.endsWith("readyz check passed\n"));
      JsonNode first = await().atMost(WAIT).until(() -> receipt(health, "configmaps", "app-config"),
          r -> r != null && created.getMetadata().getResourceVersion().equals(r.path("resourceVersion").asText()));
      assertEquals(created.getMetadata().getUid(), first.get("uid").asText());
      assertFalse(first.get("stale").asBoolean());
      assertTrue(first.get("lastChanged").isTextual() && first.get("seen").isTextual());
      await().atMost(WAIT).until(() -> bundleContext.getServiceReferences(Condition.class, CACHES_SYNCED).size()
          == 1);

      // an update on the server: the receipt shows the new version
      String updated = direct.configMaps().inNamespace(NS).withName("app-config")
          .edit(cm -> new ConfigMapBuilder(cm).addToData("mode", "slow").build()).getMetadata().getResourceVersion();
      await().atMost(WAIT).until(() -> receipt(health, "configmaps", "app-config"),
          r -> updated.equals(r.path("resourceVersion").asText()) && !r.get("stale").asBoolean());

      // the API server goes away: not ready, caches not synced, receipts stale; still alive
      proxy.stop();
      await().atMost(WAIT).until(() -> get(health + "/readyz").statusCode() == 503);
      // the API server check keeps its result 5 s; then it fails too
      String notReady = await().atMost(WAIT).until(() -> get(health + "/readyz").body(),
          body -> body.contains("[-]nodelet-apiserver failed"));
      assertTrue(notReady, notReady.endsWith("readyz check failed\n"));
      JsonNode stale = await().atMost(WAIT).until(() -> receipt(health, "configmaps", "app-config"),
          r -> r.get("stale").asBoolean());
      assertTrue(stale.toString(), stale.get("staleReason").asText().contains("watch"));
      assertEquals("the last version seen is still served", updated, stale.get("resourceVersion").asText());
      await().atMost(WAIT).until(() -> bundleContext.getServiceReferences(Condition.class, CACHES_SYNCED)
          .isEmpty());
      assertEquals(200, get(health + "/livez").statusCode());
      String systemHealth = get(health + "/system/health").body();
      assertTrue(systemHealth, JSON.readTree(systemHealth).get("overallResult").asText().equals("CRITICAL"));

      // back again: ready and fresh
      proxy.start();
      await().atMost(WAIT).until(() -> get(health + "/readyz").statusCode() == 200);
      await().atMost(WAIT).until(() -> !receipt(health, "configmaps", "app-config").get("stale").asBoolean()
          && !receipt(health, "secrets", "app-secret").get("stale").asBoolean());

      // no Secret value, plain or base64, in anything the endpoint shows
      String base64 = Base64.getEncoder().encodeToString(SECRET_VALUE.getBytes());
      for (String path : new String[] {"/receipts", "/readyz?verbose", "/livez?verbose", "/system/health"}) {
        String body = get(health + path).body();
        assertFalse(path + ": " + body, body.contains(SECRET_VALUE) || body.contains(base64));
      }
    }
  }


  private static HttpResponse<String> get(String uri) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(uri)).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The receipt of one object of the pod {@code app}, or null. */
  private static JsonNode receipt(String health, String resource, String name) throws Exception {
    JsonNode pods = JSON.readTree(get(health + "/receipts?namespace=" + NS + "&pod=app").body()).get("pods");
    for (JsonNode pod : pods) {
      for (JsonNode object : pod.get("objects")) {
        if (resource.equals(object.get("resource").asText()) && name.equals(object.get("name").asText())) {
          return object;
        }
      }
    }
    return null;
  }
}
