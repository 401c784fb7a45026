package dev.nodelet.testing.apiserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded API server over HTTPS: its CA, ALPN (HTTP/2, HTTP/1.1 fallback) and the kubeconfig it writes. */
class ApiServerTlsTest {

  @TempDir
  Path dir;
  @AutoClose // after the test's @AfterEach methods
  private EmbeddedApiServer server;

  /** An SSL context that trusts only this server's CA. */
  static SSLContext trusting(EmbeddedApiServer server) throws Exception {
    X509Certificate ca = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(
        new ByteArrayInputStream(server.caCertificatePem().getBytes(StandardCharsets.US_ASCII)));
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    trust.setCertificateEntry("ca", ca);
    TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(trust);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, factory.getTrustManagers(), null);
    return context;
  }

  @Test
  void fabric8ClientSpeaksHttp2OverTlsWithTheServersCa() throws Exception {
    server = EmbeddedApiServer.builder().tls().build().start();
    assertThat(server.url()).startsWith("https://127.0.0.1:");
    List<Watcher.Action> events = new CopyOnWriteArrayList<>();
    try (KubernetesClient client = server.newClient();
        Watch watch = client.configMaps().withName("settings").watch(new Watcher<>() {
          @Override
          public void eventReceived(Action action, ConfigMap resource) {
            events.add(action);
          }

          @Override
          public void onClose(WatcherException cause) {
          }
        })) {
      client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("settings").endMetadata()
          .addToData("mode", "fast").build()).create();
      client.configMaps().withName("settings").edit(c -> new ConfigMapBuilder(c).addToData("mode", "slow").build());
      assertThat(client.configMaps().withName("settings").get().getData()).containsEntry("mode", "slow");
      await().atMost(Duration.ofSeconds(10)).until(() -> events.size() == 2);
      assertThat(events).containsExactly(Watcher.Action.ADDED, Watcher.Action.MODIFIED);
    }
    // ALPN chose HTTP/2 for every request but the watch: fabric8 opens watches as WebSockets, which the JDK client
    // speaks over HTTP/1.1 only
    assertThat(server.requestsByProtocol()).containsEntry("http/1.1", 1L);
    assertThat(server.requestsByProtocol().get("h2")).isGreaterThanOrEqualTo(4);
  }

  @Test
  void aClientThatDoesNotTrustTheCaIsRefused() {
    server = EmbeddedApiServer.builder().tls().build().start();
    Config untrusting = new io.fabric8.kubernetes.client.ConfigBuilder(Config.empty())
        .withMasterUrl(server.url()).withRequestRetryBackoffLimit(0).build();
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(untrusting).build()) {
      assertThatThrownBy(() -> client.configMaps().inNamespace("default").list())
          .isInstanceOf(KubernetesClientException.class)
          .hasRootCauseInstanceOf(java.security.cert.CertPathBuilderException.class);
    }
    assertThat(server.requestsByProtocol()).isEmpty();
  }

  @Test
  void http11IsTheFallbackForClientsWithoutHttp2() throws Exception {
    server = EmbeddedApiServer.builder().tls().build().start();
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(trusting(server))
        .build();
    HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create(server.url() + "/api/v1/pods"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
    assertThat(response.body()).contains("\"kind\":\"PodList\"");
    assertThat(server.requestsByProtocol()).containsExactly(Map.entry("http/1.1", 1L));
  }

  @Test
  void theServingCertificateNamesLocalhostAndTheLoopbackAddresses() throws Exception {
    server = EmbeddedApiServer.builder().tls().build().start();
    HttpClient client = HttpClient.newBuilder().sslContext(trusting(server)).build();
    // the host name is verified: localhost is in the certificate as well as 127.0.0.1
    HttpResponse<String> response = client.send(HttpRequest.newBuilder(
        URI.create("https://localhost:" + server.port() + "/version")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.version()).isEqualTo(HttpClient.Version.HTTP_2);

    // another server's CA does not verify this one
    try (EmbeddedApiServer other = EmbeddedApiServer.builder().tls().build().start()) {
      HttpClient wrongCa = HttpClient.newBuilder().sslContext(trusting(other)).build();
      assertThatThrownBy(() -> wrongCa.send(HttpRequest.newBuilder(URI.create(server.url() + "/version")).build(),
          HttpResponse.BodyHandlers.ofString())).isInstanceOf(SSLHandshakeException.class);
    }
  }

  @Test
  void theKubeconfigCarriesTheCaAndTheHttpsUrl() throws Exception {
    server = EmbeddedApiServer.builder().tls().build().start();
    Path kubeconfig = server.writeKubeconfig(dir.resolve("kubeconfig"));
    String yaml = Files.readString(kubeconfig);
    assertThat(yaml).contains("server: " + server.url())
        .contains("certificate-authority-data: " + Base64.getEncoder().encodeToString(
            server.caCertificatePem().getBytes(StandardCharsets.US_ASCII)))
        .doesNotContain("insecure");
    // fabric8 reads it as kubectl would and verifies the server with it
    Config config = Config.fromKubeconfig(null, yaml, kubeconfig.toString());
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build()) {
      assertThat(client.pods().inNamespace("default").list().getItems()).isEmpty();
    }
    assertThat(server.requestsByProtocol()).containsOnlyKeys("h2");
  }

  @Test
  void theKubeconfigsAdminTokenIsAllowedEverythingAndOtherTokensAreNot() throws Exception {
    server = EmbeddedApiServer.builder().tls()
        .authorize("reader-token", "reader", List.of(new PolicyRuleBuilder().withApiGroups("")
            .withResources("configmaps").withVerbs("get", "list", "watch").build()))
        .build().start();
    String yaml = Files.readString(server.writeKubeconfig(dir.resolve("kubeconfig")));
    try (KubernetesClient admin = new KubernetesClientBuilder()
        .withConfig(Config.fromKubeconfig(null, yaml, null)).build();
        KubernetesClient reader = server.newClient("reader-token")) {
      admin.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("a").endMetadata().build())
          .create();
      assertThat(reader.configMaps().withName("a").get()).isNotNull();
      assertThatThrownBy(() -> reader.configMaps().withName("a").delete())
          .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(403));
    }
    assertThat(server.deniedRequests()).extracting(DeniedRequest::user).containsExactly("reader");
  }

  @Test
  void theCaSurvivesARestartOnTheSamePort() throws Exception {
    server = EmbeddedApiServer.builder().tls().build().start();
    try (KubernetesClient client = server.newClient()) {
      client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("a").endMetadata().build())
          .create();
      server.stop();
      server.start();
      assertThat(client.configMaps().withName("a").get()).isNotNull();
    }
  }

  @Test
  void plainHttpStaysTheDefaultAndHasNoCa() {
    server = EmbeddedApiServer.builder().build().start();
    assertThat(server.isTls()).isFalse();
    assertThat(server.url()).startsWith("http://");
    assertThat(server.clientConfig().getCaCertData()).isNull();
    assertThatThrownBy(server::caCertificatePem).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("plain HTTP").hasMessageContaining("tls()");
  }

  @Test
  void plainHttpOffersHttp2Cleartext() throws Exception {
    server = EmbeddedApiServer.builder().build().start();
    // the JDK client asks for h2c with an Upgrade header on its first request
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build();
    HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create(server.url() + "/version"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.version()).isEqualTo(HttpClient.Version.HTTP_2);
    assertThat(server.requestsByProtocol()).containsOnlyKeys("h2");
  }
}
