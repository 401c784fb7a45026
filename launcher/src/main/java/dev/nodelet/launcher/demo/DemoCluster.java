package dev.nodelet.launcher.demo;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The demo world of the embedded API server: this node, two pods on it that reference ConfigMaps and Secrets in the
 * ways the kubelet resolves (env, envFrom, volumes, projected volumes, image pull secrets), and one pod elsewhere.
 * The secret values are placeholders, never real credentials.
 */
public final class DemoCluster {

  static final String NAMESPACE = "default";
  static final String DRIVER_PID = "dev.nodelet.driver.example";
  static final String DRIVER = "gpu.example.com";
  static final int DEVICES = 8;
  /** The ConfigMaps and Secrets that the demo pods of this node reference: 2 + 3. */
  static final int REFERENCED_OBJECTS = 5;

  private DemoCluster() {
  }

  public static void seed(EmbeddedApiServer server, String nodeName) {
    try (KubernetesClient client = client(server)) {
      create(client, new NodeBuilder().withNewMetadata().withName(nodeName)
          .addToAnnotations("node.alpha.kubernetes.io/ttl", "0").endMetadata().build());
      // another node of the cluster, registered as a kubelet registers one (nodelet-node reports the demo node's status)
      Map<String, Quantity> resources = Map.of("cpu", new Quantity("4"), "memory", new Quantity("8Gi"),
          "pods", new Quantity("110"), "ephemeral-storage", new Quantity("50Gi"));
      create(client, new NodeBuilder().withNewMetadata().withName("other-node").endMetadata()
          .withNewStatus().withCapacity(resources).withAllocatable(resources).endStatus().build());
      create(client, configMap("web-config", false));
      create(client, configMap("worker-config", true));
      create(client, configMap("other-config", false));
      create(client, secret("web-tls"));
      create(client, secret("db-credentials"));
      create(client, secret("registry-auth"));
      create(client, new PodBuilder().withNewMetadata().withName("web").withNamespace(NAMESPACE).endMetadata()
          .withNewSpec().withNodeName(nodeName)
          .addNewContainer().withName("web").withImage("nginx")
          .addNewEnvFrom().withNewConfigMapRef().withName("web-config").endConfigMapRef().endEnvFrom()
          .addNewEnv().withName("DB_PASSWORD").withNewValueFrom().withNewSecretKeyRef("password", "db-credentials",
              false).endValueFrom().endEnv()
          .endContainer()
          .addNewVolume().withName("tls").withNewSecret().withSecretName("web-tls").endSecret().endVolume()
          .endSpec().build());
      create(client, new PodBuilder().withNewMetadata().withName("worker").withNamespace(NAMESPACE).endMetadata()
          .withNewSpec().withNodeName(nodeName)
          .addNewImagePullSecret("registry-auth")
          .addNewContainer().withName("worker").withImage("busybox").endContainer()
          .addNewVolume().withName("config").withNewConfigMap().withName("worker-config").endConfigMap().endVolume()
          .addNewVolume().withName("creds").withNewProjected().addNewSource().withNewSecret()
          .withName("db-credentials").endSecret().endSource().endProjected().endVolume()
          .endSpec().build());
      create(client, new PodBuilder().withNewMetadata().withName("elsewhere").withNamespace(NAMESPACE).endMetadata()
          .withNewSpec().withNodeName("other-node")
          .addNewContainer().withName("c").withImage("busybox").addNewEnvFrom().withNewConfigMapRef()
          .withName("other-config").endConfigMapRef().endEnvFrom().endContainer()
          .endSpec().build());
    }
  }

  /** One line: what the demo world holds for this node. */
  static String summary(EmbeddedApiServer server, String nodeName) {
    try (KubernetesClient client = client(server)) {
      List<Pod> pods = client.pods().inAnyNamespace().withField("spec.nodeName", nodeName).list().getItems();
      return "demo: node " + nodeName + " with " + pods.size() + " pods ("
          + String.join(", ", pods.stream().map(p -> p.getMetadata().getName()).toList()) + "); "
          + client.configMaps().inNamespace(NAMESPACE).list().getItems().size() + " configmaps, "
          + client.secrets().inNamespace(NAMESPACE).list().getItems().size() + " secrets in namespace "
          + NAMESPACE;
    }
  }

  /** The example driver's configuration: a pool of this node's demo GPUs. */
  static Map<String, Object> driverConfiguration() {
    return Map.of("driver.name", DRIVER, "pool", "demo-gpus", "device.count", DEVICES);
  }

  /** Waits for the example driver's devices to be published as this node's ResourceSlices; one line. */
  static String awaitSlices(EmbeddedApiServer server, String nodeName, Duration timeout) {
    try (KubernetesClient client = client(server)) {
      long deadline = System.nanoTime() + timeout.toNanos();
      List<ResourceSlice> slices;
      do {
        slices = client.resources(ResourceSlice.class).withField("spec.nodeName", nodeName)
            .withField("spec.driver", DRIVER).list().getItems();
        int devices = slices.stream().mapToInt(s -> s.getSpec().getDevices().size()).sum();
        if (devices == DEVICES) {
          return "dra: " + DRIVER + " published " + devices + " devices in " + slices.size()
              + " ResourceSlice(s) (" + String.join(", ", slices.stream().map(s -> s.getMetadata().getName())
                  .toList()) + ")";
        }
        Thread.sleep(100);
      } while (System.nanoTime() < deadline);
      return "dra: " + DRIVER + " has not published its " + DEVICES + " devices yet";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "dra: interrupted";
    }
  }

  private static HasMetadata configMap(String name, boolean immutable) {
    return new ConfigMapBuilder().withNewMetadata().withName(name).withNamespace(NAMESPACE).endMetadata()
        .addToData("greeting", "hello from " + name).withImmutable(immutable ? Boolean.TRUE : null).build();
  }

  private static HasMetadata secret(String name) {
    return new SecretBuilder().withNewMetadata().withName(name).withNamespace(NAMESPACE).endMetadata()
        .addToStringData("password", "demo-placeholder").build();
  }

  /**
   * A client of the demo's server. The first request of the JVM sets up TLS and HTTP/2 on both sides, which can take
   * more than fabric8's 10 s request timeout on a busy machine; the demo would rather wait than not start.
   */
  private static KubernetesClient client(EmbeddedApiServer server) {
    return new KubernetesClientBuilder().withConfig(new ConfigBuilder(server.clientConfig())
        .withConnectionTimeout(60_000).withRequestTimeout(60_000).build()).build();
  }

  private static void create(KubernetesClient client, HasMetadata object) {
    client.resource(object).create();
  }
}
