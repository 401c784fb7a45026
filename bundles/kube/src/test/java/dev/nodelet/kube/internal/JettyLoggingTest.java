package dev.nodelet.kube.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.kube.internal.jetty.client.HttpSender;
import dev.nodelet.kube.internal.jettylog.Logger;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Every logger at TRACE (this test runs in its own JVM with SLF4J's simple logger at TRACE by default, see the
 * module's pom; only the embedded API server's storage, which logs what it stores, stays at INFO), a client over HTTP/2 and TLS sending a bearer token and reading Secrets: neither the token nor the
 * Secret's data reaches the output, because the embedded Jetty logs through its private logger, not SLF4J's
 * configuration.
 */
@EnabledIfSystemProperty(named = "org.slf4j.simpleLogger.defaultLogLevel", matches = "trace")
class JettyLoggingTest {

  private static final String TOKEN = "tOkEn-h2-7f3a9c1e";
  private static final String VALUE = "s3cr3t-h2-VALUE-42";
  private static final String BASE64 = Base64.getEncoder().encodeToString(VALUE.getBytes(StandardCharsets.UTF_8));
  private static final Duration WAIT = Duration.ofSeconds(30);

  @TempDir
  Path dir;

  @AutoClose
  private EmbeddedApiServer server;

  @Test
  void premise() {
    assertThat(LoggerFactory.getLogger("org.eclipse.jetty.client.HttpSender").isTraceEnabled()).isTrue();
    assertThat(LoggerFactory.getLogger(HttpSender.class).isTraceEnabled()).isTrue();
    assertThat(LoggerFactory.getLogger(KubeClientFactory.class).isTraceEnabled()).isTrue();
    // no unrelocated Jetty on this class path: the client's Jetty is the embedded one
    assertThatThrownBy(() -> Class.forName("org.eclipse.jetty.client.HttpClient"))
        .isInstanceOf(ClassNotFoundException.class);
  }

  @Test
  void jettysLoggersAreThePrivateOnes() throws ReflectiveOperationException {
    // HttpSender is the class that logs "Request headers" at DEBUG
    assertThat(HttpSender.class.getDeclaredField("LOG").getType()).isEqualTo(Logger.class);
    Logger jetty = dev.nodelet.kube.internal.jettylog.LoggerFactory.getLogger(HttpSender.class);
    assertThat(jetty.isTraceEnabled()).isFalse();
    assertThat(jetty.isDebugEnabled()).isFalse();
    assertThat(jetty.isInfoEnabled()).isFalse();
    assertThat(jetty.isWarnEnabled()).isTrue();
  }

  @Test
  void noTokenNorSecretDataInAnyOutputOverHttp2() {
    server = EmbeddedApiServer.builder().tls()
        .authorize(TOKEN, "nodelet", List.of(new PolicyRuleBuilder().withApiGroups("").withResources("secrets")
            .withVerbs("get", "list", "watch", "create", "update", "patch").build()))
        .build().start();
    KubeSettings settings = KubeSettings.builder()
        .kubeconfig(server.writeKubeconfig(dir.resolve("kubeconfig"), TOKEN).toString()).nodeName("node-a")
        .http2(true).build();
    String output = captured(() -> {
      try (KubernetesClient client = new KubeClientFactory().create(settings)) {
        client.secrets().inNamespace("ns").resource(secret("written")).create();
        Secret read = client.secrets().inNamespace("ns").withName("written").get();
        assertThat(new String(Base64.getDecoder().decode(read.getData().get("password")), StandardCharsets.UTF_8))
            .isEqualTo(VALUE);
        assertThat(client.secrets().inNamespace("ns").list().getItems()).hasSize(1);
        SharedIndexInformer<Secret> informer = client.secrets().inNamespace("ns").inform();
        try {
          client.secrets().inNamespace("ns").resource(secret("second")).create();
          await().atMost(WAIT).until(() -> informer.getStore().list().size() == 2);
        } finally {
          informer.close();
        }
        // refused: a response Jetty handles as a failure
        assertThatThrownBy(() -> client.configMaps().inNamespace("ns").list())
            .isInstanceOf(KubernetesClientException.class);
      }
    });

    assertThat(server.requestsByProtocol()).containsKey("h2");
    assertThat(output).as("Nodelet's own logging at INFO").contains("INFO " + KubeClientFactory.class.getName())
        .contains("HTTP/2 over Jetty's client");
    assertThat(output).as("fabric8's own DEBUG logging").contains("DEBUG io.fabric8.");
    assertThat(output).doesNotContain(TOKEN).doesNotContain(VALUE).doesNotContain(BASE64)
        .doesNotContainPattern("(TRACE|DEBUG|INFO) dev\\.nodelet\\.kube\\.internal\\.jetty\\.");
  }

  @Test
  void jettysWarningsNameTheExceptionTypesOnly() {
    Logger jetty = dev.nodelet.kube.internal.jettylog.LoggerFactory.getLogger(HttpSender.class);
    String output = captured(() -> {
      jetty.debug("Request headers {}{}", System.lineSeparator(), "Authorization: Bearer " + TOKEN);
      jetty.warn("Failure {} for Authorization: Bearer " + TOKEN, "Bearer " + TOKEN,
          new IOException("Bearer " + TOKEN, new IllegalStateException(TOKEN)));
      jetty.error("Bearer " + TOKEN);
    });

    assertThat(output).doesNotContain(TOKEN).doesNotContain("Request headers")
        .contains("WARN " + HttpSender.class.getName() + " - Jetty reported a problem: java.io.IOException <- "
            + "java.lang.IllegalStateException")
        .contains("ERROR " + HttpSender.class.getName() + " - Jetty reported a problem");
  }

  private static Secret secret(String name) {
    return new SecretBuilder().withNewMetadata().withName(name).withNamespace("ns").endMetadata()
        .addToData("password", BASE64).build();
  }

  /** Everything written to System.out and System.err while {@code action} runs, other threads' lines included. */
  private static String captured(Runnable action) {
    PrintStream out = System.out;
    PrintStream err = System.err;
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream capture = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    System.setOut(capture);
    System.setErr(capture);
    try {
      action.run();
    } finally {
      System.setOut(out);
      System.setErr(err);
    }
    String text = bytes.toString(StandardCharsets.UTF_8);
    err.println("captured " + text.lines().count() + " lines");
    return text;
  }
}
