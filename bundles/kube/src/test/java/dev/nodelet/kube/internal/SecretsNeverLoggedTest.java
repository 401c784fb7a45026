package dev.nodelet.kube.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.HttpLoggingInterceptor;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * fabric8 logs every HTTP request and response, bodies and headers included, when the logger of its
 * {@code HttpLoggingInterceptor} is at TRACE (this module's tests set it so in {@code simplelogger.properties}). A
 * client of {@link KubeClientFactory} never does: Secret data would be in the log.
 */
class SecretsNeverLoggedTest {

  private static final String VALUE = "s3cr3t-VALUE-42";
  private static final String BASE64 = Base64.getEncoder().encodeToString(VALUE.getBytes(StandardCharsets.UTF_8));

  private EmbeddedApiServer server;
  private KubernetesClient admin;

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    admin = new KubernetesClientBuilder().withConfig(server.clientConfig())
        .withHttpClientFactory(new JdkHttpClientFactory()).build();
  }

  @AfterEach
  void stop() {
    admin.close();
    server.close();
  }

  /** What SLF4J's simple logger writes to System.err while {@code action} runs (other threads included). */
  private static String logged(Runnable action) {
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      action.run();
    } finally {
      System.setErr(original);
    }
    String text = captured.toString(StandardCharsets.UTF_8);
    original.print(text);
    return text;
  }

  private static Secret secret(String name) {
    return new SecretBuilder().withNewMetadata().withName(name).withNamespace("ns").endMetadata()
        .addToData("password", BASE64).addToStringData("token", VALUE).build();
  }

  private static Consumer<KubernetesClient> everyKindOfRequest() {
    return client -> {
      client.secrets().inNamespace("ns").resource(secret("written")).create();
      assertThat(client.secrets().inNamespace("ns").withName("seed").get()).isNotNull();
      assertThat(client.secrets().inNamespace("ns").list().getItems()).isNotEmpty();
      SharedIndexInformer<Secret> informer = client.secrets().inNamespace("ns")
          .withField("metadata.name", "seed").inform();
      try {
        await().atMost(Duration.ofSeconds(30)).until(() -> !informer.getStore().list().isEmpty());
        client.secrets().inNamespace("ns").withName("seed").edit(s -> new SecretBuilder(s)
            .addToData("again", BASE64).build());
        await().atMost(Duration.ofSeconds(30)).until(() -> informer.getStore().list().stream()
            .anyMatch(s -> s.getData().containsKey("again")));
      } finally {
        informer.close();
      }
      client.secrets().inNamespace("ns").withName("written").delete();
      client.secrets().inNamespace("ns").withName("seed").edit(s -> new SecretBuilder(s)
          .removeFromData("again").build());
    };
  }

  @Test
  void fabric8LogsBodiesAtTraceButNodeletsClientDoesNot() {
    assertThat(LoggerFactory.getLogger(HttpLoggingInterceptor.class).isTraceEnabled())
        .as("the premise: fabric8's HTTP logging is on").isTrue();
    admin.secrets().inNamespace("ns").resource(secret("seed")).create();

    // a client built the usual way leaks the value, which is why the factory must not
    try (KubernetesClient plain = new KubernetesClientBuilder().withConfig(server.clientConfig())
        .withHttpClientFactory(new JdkHttpClientFactory()).build()) {
      String leaked = logged(() -> plain.secrets().inNamespace("ns").withName("seed").get());
      assertThat(leaked).contains(BASE64);
    }

    KubeSettings settings = KubeSettings.builder().masterUrl(server.url()).nodeName("node-a").build();
    try (KubernetesClient client = new KubeClientFactory().create(settings)) {
      String text = logged(() -> everyKindOfRequest().accept(client));
      for (String secret : List.of(VALUE, BASE64)) {
        assertThat(text).doesNotContain(secret);
      }
      assertThat(text).doesNotContain("-HTTP START-");
    }
  }
}
