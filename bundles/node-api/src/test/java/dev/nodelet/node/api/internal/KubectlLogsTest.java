package dev.nodelet.node.api.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.node.RegisteredNode;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.service.log.Logger;
import org.osgi.util.converter.Converters;

/**
 * {@code kubectl logs} as an operator runs it: kubectl asks the embedded API server for {@code pods/log}, which goes
 * on to the node's API named by the pod's Node (its InternalIP and kubelet port) with the API server's client
 * certificate, and the node's API answers with the records of the container's bundles in a real Felix. Runs the
 * {@code kubectl} found on the PATH and skips when there is none.
 */
class KubectlLogsTest {

  private static final Optional<Path> KUBECTL = Arrays.stream(System.getenv().getOrDefault("PATH", "")
          .split(File.pathSeparator))
      .map(dir -> Path.of(dir, "kubectl")).filter(Files::isExecutable).findFirst();

  @TempDir
  Path dir;

  private EmbeddedApiServer server;
  private PodFramework felix;
  private NodeApiComponent component;
  private Path kubeconfig;

  @BeforeEach
  void start() throws Exception {
    Assumptions.assumeTrue(KUBECTL.isPresent(), "kubectl is not on the PATH: skipping the kubectl logs test");
    server = EmbeddedApiServer.builder().tls().build().start();
    kubeconfig = server.writeKubeconfig(dir.resolve("kubeconfig"));
    felix = new PodFramework(dir.resolve("felix"));
    Path clientCa = Files.writeString(dir.resolve("apiserver-client-ca.pem"), server.kubeletClientCaPem());
    component = new NodeApiComponent(felix.context(), new Registered("edge-1"),
        Converters.standardConverter().convert(Map.of("port", 0, "address", "127.0.0.1",
            "client.ca.file", clientCa.toString())).to(NodeApiConfiguration.class));
    component.addReader(felix.logReader());
    try (KubernetesClient client = server.newClient()) {
      Node node = client.nodes().resource(new NodeBuilder().withNewMetadata().withName("edge-1").endMetadata()
          .build()).create();
      node.setStatus(new NodeBuilder().withNewStatus().addNewAddress().withType("InternalIP")
          .withAddress("127.0.0.1").endAddress().withNewDaemonEndpoints().withNewKubeletEndpoint()
          .withPort(component.port()).endKubeletEndpoint().endDaemonEndpoints().endStatus().build().getStatus());
      client.nodes().resource(node).updateStatus();
      client.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName("web")
          .endMetadata().withNewSpec().withNodeName("edge-1").addNewContainer().withName("app")
          .withImage("mvn:dev.nodelet.examples/app/1.0").endContainer().endSpec().build()).create();
    }
  }

  @AfterEach
  void stop() throws Exception {
    if (component != null) {
      component.deactivate();
    }
    if (felix != null) {
      felix.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  void kubectlLogsReadsTheContainersRecordsThroughTheApiServer() throws Exception {
    Bundle app = felix.install("nodelet-pod:default/web/app", "web.app");
    Logger log = PodFramework.logger(app, "web.App");
    log.info("started");
    log.warn("low on coffee");
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(kubectl("logs", "web"))
        .isEqualTo("INFO web.App: started\nWARN web.App: low on coffee\n"));
    assertThat(kubectl("logs", "web", "-c", "app", "--tail=1")).isEqualTo("WARN web.App: low on coffee\n");
    assertThat(kubectl("logs", "web", "-c", "db")).contains("container db is not valid for pod web");
  }

  @Test
  void kubectlLogsFollowStreamsNewRecords() throws Exception {
    Bundle app = felix.install("nodelet-pod:default/web/app", "web.app");
    Logger log = PodFramework.logger(app, "web.App");
    log.info("one");
    Process follow = new ProcessBuilder(KUBECTL.get().toString(), "--kubeconfig", kubeconfig.toString(), "logs",
        "-f", "web").redirectErrorStream(true).start();
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(follow.getInputStream(),
          StandardCharsets.UTF_8))) {
        for (String line = in.readLine(); line != null; line = in.readLine()) {
          lines.add(line);
        }
      } catch (IOException e) {
        lines.add("<error " + e + ">");
      }
    });
    reader.start();
    try {
      assertThat(lines.poll(10, TimeUnit.SECONDS)).isEqualTo("INFO web.App: one");
      log.info("two");
      assertThat(lines.poll(10, TimeUnit.SECONDS)).isEqualTo("INFO web.App: two");
    } finally {
      follow.destroy();
      follow.waitFor(10, TimeUnit.SECONDS);
      reader.join(5000);
    }
  }

  private String kubectl(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(KUBECTL.get().toString(), "--kubeconfig",
        kubeconfig.toString()));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    process.waitFor(20, TimeUnit.SECONDS);
    return out;
  }

  /** This node as node mode registers it. */
  private record Registered(String nodeName) implements RegisteredNode {
    @Override
    public Optional<Node> node() {
      return Optional.empty();
    }
  }
}
