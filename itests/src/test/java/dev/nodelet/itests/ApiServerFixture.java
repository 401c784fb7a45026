package dev.nodelet.itests;

import dev.nodelet.testing.apiserver.ClusterRoles;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The embedded API server of one test class, started in the test JVM (never in the OSGi container) and seeded with
 * this node's Node and a ConfigMap, so that the container can prove it reaches this very server.
 */
record ApiServerFixture(EmbeddedApiServer server, String nodeUid) implements AutoCloseable {

  static ApiServerFixture start() {
    return start(EmbeddedApiServer.builder());
  }

  /**
   * A server on which requests with {@code token} act as {@code user} and may do only what the ClusterRole
   * {@code clusterRole} of the manifest allows; requests without a token (this fixture's own) may do anything.
   */
  static ApiServerFixture startLimitedTo(Path manifest, String clusterRole, String token, String user) {
    return start(EmbeddedApiServer.builder().authorize(token, user, ClusterRoles.rules(manifest, clusterRole)));
  }

  /**
   * The same over HTTPS with HTTP/2, as a cluster serves (kubeconfigs written for it carry its CA), with the rules of
   * the ClusterRole changed by {@code adjust} first, e.g. to let the token read only some Secrets by name.
   */
  static ApiServerFixture startTlsLimitedTo(Path manifest, String clusterRole, String token, String user,
      UnaryOperator<List<PolicyRule>> adjust) {
    return start(EmbeddedApiServer.builder().tls().authorize(token, user,
        adjust.apply(ClusterRoles.rules(manifest, clusterRole))));
  }

  private static ApiServerFixture start(EmbeddedApiServer.Builder builder) {
    EmbeddedApiServer server = builder.build().start();
    try (KubernetesClient client = server.newClient()) {
      client.configMaps().inNamespace("default").resource(new ConfigMapBuilder()
          .withNewMetadata().withName(NodeletTestSupport.SEEDED_CONFIGMAP).endMetadata()
          .withData(Map.of(NodeletTestSupport.SEEDED_KEY, NodeletTestSupport.SEEDED_VALUE))
          .build()).create();
      String uid = client.nodes().resource(new NodeBuilder()
          .withNewMetadata().withName(NodeletTestSupport.NODE_NAME).endMetadata()
          .build()).create().getMetadata().getUid();
      return new ApiServerFixture(server, uid);
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
  }

  String url() {
    return server.url();
  }

  /** A client allowed everything; the caller closes it. */
  KubernetesClient newClient() {
    return server.newClient();
  }

  /**
   * Seeds namespace default with ConfigMaps cm-a and cm-b and Secrets s-a and s-pull, each holding its own name under
   * "v", and pod p1 of this node that references all four: cm-a through envFrom, cm-b and s-a in volumes, s-pull as
   * its image pull secret.
   */
  static void seedPodP1(KubernetesClient admin) {
    for (String name : List.of("cm-a", "cm-b")) {
      admin.configMaps().inNamespace("default").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
          .endMetadata().addToData("v", name).build()).create();
    }
    for (String name : List.of("s-a", "s-pull")) {
      admin.secrets().inNamespace("default").resource(new SecretBuilder().withNewMetadata().withName(name)
          .endMetadata().addToData("v", base64(name)).build()).create();
    }
    admin.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName("p1").endMetadata()
        .withNewSpec().withNodeName(NodeletTestSupport.NODE_NAME).addNewImagePullSecret("s-pull")
        .addNewContainer().withName("c").withImage("busybox")
        .addNewEnvFrom().withNewConfigMapRef().withName("cm-a").endConfigMapRef().endEnvFrom().endContainer()
        .addNewVolume().withName("cm").withNewConfigMap().withName("cm-b").endConfigMap().endVolume()
        .addNewVolume().withName("s").withNewSecret().withSecretName("s-a").endSecret().endVolume()
        .endSpec().build()).create();
  }

  private static String base64(String value) {
    return Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8));
  }

  /** The PEM of the CA that signed this server's certificate; only over TLS. */
  String caCertificatePem() {
    return server.caCertificatePem();
  }

  /** Writes a kubeconfig for this server that sends {@code token}. */
  Path writeKubeconfig(Path file, String token) {
    return server.writeKubeconfig(file, token);
  }

  /** Forgets the writes and denied requests so far, such as those of seeding. */
  void clearRecords() {
    server.clearWrites();
    server.clearDeniedRequests();
  }

  @Override
  public void close() {
    server.close();
  }
}
