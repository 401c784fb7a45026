package dev.nodelet.node.api.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.node.RegisteredNode;
import io.fabric8.kubernetes.api.model.Node;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.service.log.LogReaderService;
import org.osgi.service.log.Logger;
import org.osgi.util.converter.Converters;

/**
 * The node's API over real HTTPS, serving the records that bundles installed at a pod container's location log
 * through a real Felix log service: the kubelet's {@code /containerLogs} query, its authentication and the release of
 * a container's log with its bundles.
 */
class NodeApiComponentTest {

  private static final String TOKEN = "s3cr3t-token-of-the-api-server";

  @TempDir
  Path dir;

  private PodFramework felix;
  private NodeApiComponent component;
  private Certificates.Identity apiServer;

  @BeforeEach
  void start() throws Exception {
    felix = new PodFramework(dir.resolve("felix"));
    apiServer = Certificates.selfSigned("kube-apiserver-kubelet-client", List.of(), List.of());
    // a self-signed client certificate is its own CA
    Files.writeString(dir.resolve("client-ca.pem"), Certificates.pem(apiServer.chain()));
    Files.writeString(dir.resolve("tokens"), "# token,user\n" + TOKEN + ",system:apiserver\nother,someone\n");
  }

  @AfterEach
  void stop() throws Exception {
    if (component != null) {
      component.deactivate();
    }
    felix.close();
  }

  private NodeApiComponent activate(Map<String, Object> extra) {
    Map<String, Object> properties = new HashMap<>(Map.of("port", 0, "address", "127.0.0.1",
        "client.ca.file", dir.resolve("client-ca.pem").toString(), "token.file", dir.resolve("tokens").toString(),
        "authorized.users", List.of("kube-apiserver-kubelet-client", "system:apiserver")));
    properties.putAll(extra);
    NodeApiComponent activated = new NodeApiComponent(felix.context(), new Registered("edge-1"),
        Converters.standardConverter().convert(properties).to(NodeApiConfiguration.class));
    activated.addReader(felix.logReader()); // as Declarative Services binds the dynamic reference
    return activated;
  }

  private TlsClient client(Certificates.Identity identity) throws Exception {
    return new TlsClient(component.servingCertificate(), identity, component.port());
  }

  @Test
  void servesTheRecordsOfAContainersBundlesAsTheKubeletsQueryAsks() throws Exception {
    component = activate(Map.of());
    Bundle app = felix.install("nodelet-pod:shop/web-0/app", "shop.app");
    Bundle sidecar = felix.install("nodelet-pod:shop/web-0/app/extra", "shop.app.extra");
    Bundle other = felix.install("nodelet-pod:shop/web-0/application", "shop.application");
    Logger log = PodFramework.logger(app, "shop.App");
    log.info("first");
    log.warn("second");
    PodFramework.logger(sidecar, "shop.Extra").info("third");
    PodFramework.logger(other, "shop.Other").info("not this container's");
    TlsClient client = client(apiServer);

    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(
        client.get("/containerLogs/shop/web-0/app", null).body())
        .isEqualTo("INFO shop.App: first\nWARN shop.App: second\nINFO shop.Extra: third\n"));
    assertThat(client.get("/containerLogs/shop/web-0/app?tailLines=1", null).body())
        .isEqualTo("INFO shop.Extra: third\n");
    assertThat(client.get("/containerLogs/shop/web-0/app?limitBytes=10", null).body()).isEqualTo("INFO shop.");
    assertThat(client.get("/containerLogs/shop/web-0/app?sinceSeconds=3600", null).body().lines()).hasSize(3);
    assertThat(client.get("/containerLogs/shop/web-0/app?sinceTime=2999-01-01T00:00:00Z", null).body()).isEmpty();
    String stamped = client.get("/containerLogs/shop/web-0/app?timestamps=true&tailLines=1", null).body();
    assertThat(stamped).endsWith(" INFO shop.Extra: third\n");
    assertThat(Instant.parse(stamped.substring(0, stamped.indexOf(' '))))
        .isBetween(Instant.now().minusSeconds(60), Instant.now());

    HttpResponse<String> missing = client.get("/containerLogs/shop/web-0/db", null);
    assertThat(missing.statusCode()).isEqualTo(404);
    assertThat(missing.body()).contains("container \"db\" in pod \"shop/web-0\"");
    HttpResponse<String> previous = client.get("/containerLogs/shop/web-0/app?previous=true", null);
    assertThat(previous.statusCode()).isEqualTo(400);
    assertThat(previous.body()).contains("previous terminated container \"app\"");
    HttpResponse<String> bad = client.get("/containerLogs/shop/web-0/app?tailLines=-2", null);
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(bad.body()).contains("tailLines must be an integer of at least 0, not -2");
    assertThat(client.get("/containerLogs/shop/web-0/app?sinceSeconds=1&sinceTime=2026-01-01T00:00:00Z", null)
        .body()).contains("at most one of sinceTime or sinceSeconds");
    assertThat(client.get("/healthz", null).body()).isEqualTo("ok\n");
  }

  @Test
  void onlyTheApiServersCertificateOrAnAllowedTokenReadsLogs() throws Exception {
    component = activate(Map.of());
    felix.install("nodelet-pod:shop/web-0/app", "shop.app");
    TlsClient anonymous = client(null);
    HttpResponse<String> unauthenticated = anonymous.get("/containerLogs/shop/web-0/app", null);
    assertThat(unauthenticated.statusCode()).isEqualTo(401);
    assertThat(anonymous.get("/containerLogs/shop/web-0/app", "a-wrong-token").statusCode()).isEqualTo(401);
    assertThat(anonymous.get("/containerLogs/shop/web-0/app", TOKEN).statusCode()).isEqualTo(200);
    HttpResponse<String> forbidden = anonymous.get("/containerLogs/shop/web-0/app", "other");
    assertThat(forbidden.statusCode()).isEqualTo(403);
    assertThat(forbidden.body()).contains("user=someone").contains("subresource=log");
    assertThat(client(apiServer).get("/containerLogs/shop/web-0/app", null).statusCode()).isEqualTo(200);
    // a certificate of another CA does not get through the handshake
    Certificates.Identity stranger = Certificates.selfSigned("kube-apiserver-kubelet-client", List.of(), List.of());
    assertThatThrownBy(() -> client(stranger).get("/containerLogs/shop/web-0/app", null))
        .isInstanceOf(java.io.IOException.class);
    assertThat(anonymous.get("/healthz", null).body()).isEqualTo("ok\n");
  }

  @Test
  void followStreamsNewRecordsAndEndsWhenTheContainersBundlesGo() throws Exception {
    component = activate(Map.of());
    Bundle app = felix.install("nodelet-pod:shop/web-0/app", "shop.app");
    Logger log = PodFramework.logger(app, "shop.App");
    log.info("before");
    TlsClient client = client(apiServer);
    await().atMost(Duration.ofSeconds(5)).until(() -> !client.get("/containerLogs/shop/web-0/app", null).body()
        .isEmpty());

    HttpResponse<InputStream> follow = client.http().send(
        client.request("/containerLogs/shop/web-0/app?follow=true", null), HttpResponse.BodyHandlers.ofInputStream());
    assertThat(follow.statusCode()).isEqualTo(200);
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(follow.body(), StandardCharsets.UTF_8))) {
        for (String line = in.readLine(); line != null; line = in.readLine()) {
          lines.add(line);
        }
        lines.add("<end>");
      } catch (Exception e) {
        lines.add("<error " + e + ">");
      }
    });
    reader.start();
    assertThat(lines.poll(5, TimeUnit.SECONDS)).isEqualTo("INFO shop.App: before");
    log.info("after");
    assertThat(lines.poll(5, TimeUnit.SECONDS)).isEqualTo("INFO shop.App: after");

    assertThat(component.containers()).isEqualTo(1);
    app.uninstall();
    assertThat(lines.poll(5, TimeUnit.SECONDS)).isEqualTo("<end>");
    reader.join(5000);
    assertThat(component.containers()).isZero();
    assertThat(client.get("/containerLogs/shop/web-0/app", null).statusCode()).isEqualTo(404);
  }

  @Test
  void keepsTheLastLinesOfEachContainer() throws Exception {
    component = activate(Map.of("log.lines", 3));
    Bundle app = felix.install("nodelet-pod:shop/web-0/app", "shop.app");
    Logger log = PodFramework.logger(app, "l");
    for (int i = 1; i <= 5; i++) {
      log.info("line " + i);
    }
    TlsClient client = client(apiServer);
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(
        client.get("/containerLogs/shop/web-0/app", null).body()).isEqualTo("INFO l: line 3\nINFO l: line 4\n"
        + "INFO l: line 5\n"));
  }

  @Test
  void servesTheConfiguredCertificateAndLeavesNothingRunning() throws Exception {
    Certificates.Identity serving = Certificates.selfSigned("edge-1", List.of("localhost"),
        List.of(InetAddress.getLoopbackAddress()));
    Files.writeString(dir.resolve("tls.crt"), Certificates.pem(serving.chain()));
    Files.writeString(dir.resolve("tls.key"), Certificates.pem(serving.key()));
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    component = activate(Map.of("port", port, "tls.cert.file", dir.resolve("tls.crt").toString(),
        "tls.key.file", dir.resolve("tls.key").toString()));
    assertThat(component.port()).isEqualTo(port);
    assertThat(component.servingCertificate()).isEqualTo(serving.chain().get(0));
    assertThat(new TlsClient(serving.chain().get(0), null, port).get("/healthz", null).body()).isEqualTo("ok\n");

    component.deactivate();
    component = null;
    await().atMost(Duration.ofSeconds(5)).until(() -> Thread.getAllStackTraces().keySet().stream()
        .noneMatch(t -> t.getName().startsWith(NodeApiServer.THREAD_PREFIX)));
    try (ServerSocket again = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
      assertThat(again.getLocalPort()).isEqualTo(port);
    }
  }

  @Test
  void aLogReaderThatGoesAndComesLeavesTheServerOnItsPort() throws Exception {
    component = activate(Map.of());
    int port = component.port();
    Bundle app = felix.install("nodelet-pod:shop/web-0/app", "shop.app");
    Logger log = PodFramework.logger(app, "shop.App");
    TlsClient client = client(apiServer);
    LogReaderService reader = felix.logReader();

    log.info("first");
    await().atMost(Duration.ofSeconds(5)).until(() -> !client.get("/containerLogs/shop/web-0/app", null).body()
        .isEmpty());

    component.removeReader(reader); // as pax-logging withdraws its reader while the framework stops
    log.info("while the reader was away");
    component.addReader(reader);
    log.info("read again");
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(
        client.get("/containerLogs/shop/web-0/app", null).body()).as("what it missed, once each")
        .isEqualTo("INFO shop.App: first\nINFO shop.App: while the reader was away\nINFO shop.App: read again\n"));
    assertThat(component.port()).as("the same server, on the same port").isEqualTo(port);
  }

  @Test
  void refusesAConfigurationItCannotUseNamingTheKey() {
    assertThatThrownBy(() -> activate(Map.of("tls.cert.file", dir.resolve("absent.crt").toString())))
        .hasMessageContaining("tls.cert.file and tls.key.file");
    assertThatThrownBy(() -> activate(Map.of("client.ca.file", dir.resolve("absent.pem").toString())))
        .hasMessageContaining("absent.pem");
    assertThatThrownBy(() -> activate(Map.of("address", "not an address")))
        .hasMessageContaining("address of " + NodeApiComponent.PID);
  }

  /** This node as node mode registers it. */
  private record Registered(String nodeName) implements RegisteredNode {
    @Override
    public Optional<Node> node() {
      return Optional.empty();
    }
  }
}
