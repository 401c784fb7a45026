package dev.nodelet.launcher;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;

/**
 * The demo world of the embedded API server: this node, two pods on it that reference ConfigMaps and Secrets in the
 * ways the kubelet resolves (env, envFrom, volumes, projected volumes, image pull secrets), and one pod elsewhere.
 * The secret values are placeholders, never real credentials.
 */
final class DemoCluster {

  static final String NAMESPACE = "default";

  private DemoCluster() {
  }

  static void seed(EmbeddedApiServer server, String nodeName) {
    try (KubernetesClient client = server.newClient()) {
      create(client, new NodeBuilder().withNewMetadata().withName(nodeName)
          .addToAnnotations("node.alpha.kubernetes.io/ttl", "0").endMetadata().build());
      create(client, new NodeBuilder().withNewMetadata().withName("other-node").endMetadata().build());
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
    try (KubernetesClient client = server.newClient()) {
      List<Pod> pods = client.pods().inAnyNamespace().withField("spec.nodeName", nodeName).list().getItems();
      return "demo: node " + nodeName + " with " + pods.size() + " pods ("
          + String.join(", ", pods.stream().map(p -> p.getMetadata().getName()).toList()) + "); "
          + client.configMaps().inNamespace(NAMESPACE).list().getItems().size() + " configmaps, "
          + client.secrets().inNamespace(NAMESPACE).list().getItems().size() + " secrets in namespace "
          + NAMESPACE;
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

  private static void create(KubernetesClient client, HasMetadata object) {
    client.resource(object).create();
  }
}
