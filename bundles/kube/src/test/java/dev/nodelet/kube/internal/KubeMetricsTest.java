package dev.nodelet.kube.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import dev.nodelet.testing.metrics.Scrape;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class KubeMetricsTest {

  private final KubeMetrics metrics = new KubeMetrics();

  private String scrape() {
    return Scrape.text(metrics::collect);
  }

  private double value(String series) {
    return Scrape.value(metrics::collect, series);
  }

  /** Either transport measures: Jetty's (the default) and the JDK client's. */
  @ParameterizedTest(name = "http2.enabled={0}")
  @ValueSource(booleans = {true, false})
  void countsTheRequestsTheServerSawByVerbResourceAndCode(boolean http2) throws Exception {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = new KubeClientFactory(metrics).create(
            KubeSettings.builder().masterUrl(server.url()).nodeName("node-a").http2(http2).build())) {
      String host = "127.0.0.1:" + server.port();
      client.configMaps().inNamespace("default").resource(new ConfigMapBuilder().withNewMetadata()
          .withName("app").endMetadata().withData(Map.of("k", "v")).build()).create();
      client.secrets().inNamespace("default").resource(new SecretBuilder().withNewMetadata()
          .withName("db-password").endMetadata().withStringData(Map.of("password", "hunter2")).build()).create();
      client.configMaps().inNamespace("default").withName("app").get();
      client.configMaps().inNamespace("default").withName("absent").get(); // 404: fabric8 answers null
      client.secrets().inNamespace("default").list();
      server.failNext(Verb.GET, "configmaps", 1, 503);
      assertThatThrownBy(() -> client.configMaps().inNamespace("default").withName("app").get())
          .isInstanceOf(KubernetesClientException.class);

      assertThat(value("nodelet_apiserver_requests_total{code=\"201\",resource=\"configmaps\",verb=\"create\"}"))
          .isEqualTo(server.requestCount(Verb.CREATE, "configmaps")).isEqualTo(1);
      assertThat(value("nodelet_apiserver_requests_total{code=\"200\",resource=\"configmaps\",verb=\"get\"}"))
          .isEqualTo(1);
      assertThat(value("nodelet_apiserver_requests_total{code=\"404\",resource=\"configmaps\",verb=\"get\"}"))
          .isEqualTo(1);
      assertThat(value("nodelet_apiserver_requests_total{code=\"503\",resource=\"configmaps\",verb=\"get\"}"))
          .isEqualTo(1);
      assertThat(value("nodelet_apiserver_requests_total{code=\"200\",resource=\"secrets\",verb=\"list\"}"))
          .isEqualTo(server.requestCount(Verb.LIST, "secrets")).isEqualTo(1);
      assertThat(value("rest_client_requests_total{code=\"200\",host=\"" + host + "\",method=\"GET\"}"))
          .isEqualTo(2);
      assertThat(value("rest_client_requests_total{code=\"201\",host=\"" + host + "\",method=\"POST\"}"))
          .isEqualTo(2);
      // every attempt is timed, per HTTP method and host
      assertThat(value("rest_client_request_duration_seconds_count{host=\"" + host + "\",verb=\"GET\"}"))
          .isEqualTo(4);
      assertThat(value("rest_client_request_duration_seconds_count{host=\"" + host + "\",verb=\"POST\"}"))
          .isEqualTo(2);
      assertThat(value("rest_client_request_duration_seconds_bucket{host=\"" + host + "\",verb=\"GET\",le=\"60.0\"}"))
          .isEqualTo(4);
      // names of objects, keys and values never become labels
      assertThat(scrape()).doesNotContain("db-password").doesNotContain("hunter2").doesNotContain("password")
          .doesNotContain("app\"").doesNotContain("default");
    }
  }

  @Test
  void aRefusedConnectionCountsAsAnErrorWithItsDuration() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort(); // closed again: nothing listens there
    }
    try (KubernetesClient client = new KubeClientFactory(metrics).create(KubeSettings.builder()
        .masterUrl("http://127.0.0.1:" + port).nodeName("node-a").build())) {
      assertThatThrownBy(() -> client.configMaps().inNamespace("default").withName("app").get())
          .isInstanceOf(KubernetesClientException.class);
    }
    String host = "127.0.0.1:" + port;
    assertThat(value("rest_client_requests_total{code=\"<error>\",host=\"" + host + "\",method=\"GET\"}"))
        .isEqualTo(1);
    assertThat(value("nodelet_apiserver_requests_total{code=\"<error>\",resource=\"configmaps\",verb=\"get\"}"))
        .isEqualTo(1);
    assertThat(value("rest_client_request_duration_seconds_count{host=\"" + host + "\",verb=\"GET\"}"))
        .isEqualTo(1);
  }

  @Test
  void aRequestThatTimesOutCountsAsAnErrorAfterTheTimeout() throws Exception {
    // a server that takes the connection and never answers
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        KubernetesClient client = new KubeClientFactory(metrics).create(KubeSettings.builder()
            .masterUrl("http://127.0.0.1:" + silent.getLocalPort()).nodeName("node-a")
            .requestTimeout(Duration.ofMillis(500)).build())) {
      assertThatThrownBy(() -> client.configMaps().inNamespace("default").withName("app").get())
          .isInstanceOf(KubernetesClientException.class);
      String host = "127.0.0.1:" + silent.getLocalPort();
      assertThat(value("rest_client_requests_total{code=\"<error>\",host=\"" + host + "\",method=\"GET\"}"))
          .isEqualTo(1);
      // waited for the whole timeout: beyond the 0.25 s bucket
      assertThat(value("rest_client_request_duration_seconds_bucket{host=\"" + host + "\",verb=\"GET\",le=\"0.25\"}"))
          .isZero();
      assertThat(value("rest_client_request_duration_seconds_sum{host=\"" + host + "\",verb=\"GET\"}"))
          .isGreaterThanOrEqualTo(0.5);
    }
  }

  @Test
  void resolvesVerbAndResourceOfPathsWithoutNames() {
    assertThat(KubeMetrics.ApiPath.of("/api/v1/namespaces/ns/pods/p/status", null, "PUT"))
        .isEqualTo(new KubeMetrics.ApiPath("update", "pods/status"));
    assertThat(KubeMetrics.ApiPath.of("/api/v1/namespaces/ns/secrets", "fieldSelector=x&watch=true", "GET"))
        .isEqualTo(new KubeMetrics.ApiPath("watch", "secrets"));
    assertThat(KubeMetrics.ApiPath.of("/apis/resource.k8s.io/v1/resourceslices", "labelSelector=a", "GET"))
        .isEqualTo(new KubeMetrics.ApiPath("list", "resourceslices"));
    assertThat(KubeMetrics.ApiPath.of("/apis/resource.k8s.io/v1/resourceslices", null, "DELETE"))
        .isEqualTo(new KubeMetrics.ApiPath("deletecollection", "resourceslices"));
    assertThat(KubeMetrics.ApiPath.of("/api/v1/nodes/node-a", null, "GET"))
        .isEqualTo(new KubeMetrics.ApiPath("get", "nodes"));
    assertThat(KubeMetrics.ApiPath.of("/api/v1/namespaces/kube-system", null, "GET"))
        .isEqualTo(new KubeMetrics.ApiPath("get", "namespaces"));
    assertThat(KubeMetrics.ApiPath.of("/version", null, "GET")).isEqualTo(new KubeMetrics.ApiPath("get", "/version"));
  }
}
