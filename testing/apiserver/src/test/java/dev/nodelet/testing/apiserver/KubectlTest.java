package dev.nodelet.testing.apiserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The everyday kubectl commands against the embedded API server over TLS, with the kubeconfig it writes (its CA, no
 * {@code insecure-skip-tls-verify}). Runs the {@code kubectl} found on the PATH and skips when there is none.
 */
class KubectlTest {

  private static final Optional<Path> KUBECTL = Arrays.stream(System.getenv().getOrDefault("PATH", "")
          .split(File.pathSeparator))
      .map(dir -> Path.of(dir, "kubectl")).filter(Files::isExecutable).findFirst();

  private static final String MANIFEST = """
      apiVersion: v1
      kind: Pod
      metadata:
        name: web
        labels: {app: web}
      spec:
        nodeName: node-a
        containers:
        - name: c
          image: nginx:1.27
      ---
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: settings
      data:
        mode: "fast"
      ---
      apiVersion: resource.k8s.io/v1
      kind: ResourceSlice
      metadata:
        name: node-a-gpu
      spec:
        driver: gpu.example.com
        nodeName: node-a
        pool: {name: node-a, generation: 1, resourceSliceCount: 1}
        devices:
        - name: gpu-0
      """;

  @TempDir
  Path dir;
  @AutoClose
  private EmbeddedApiServer server;
  private Path kubeconfig;

  @BeforeEach
  void start() {
    Assumptions.assumeTrue(KUBECTL.isPresent(), "kubectl is not on the PATH: skipping the kubectl test");
    server = EmbeddedApiServer.builder().tls().build().start();
    kubeconfig = server.writeKubeconfig(dir.resolve("kubeconfig"));
  }

  private record Result(int exit, String out, String err) {
  }

  private Result kubectl(String... args) throws IOException, InterruptedException {
    return kubectlWithInput(null, args);
  }

  private Result kubectlWithInput(String stdin, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(KUBECTL.orElseThrow().toString());
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().put("KUBECONFIG", kubeconfig.toString());
    pb.environment().put("HOME", dir.toString()); // its discovery cache, not the user's
    Path out = dir.resolve("out");
    Path err = dir.resolve("err");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    Process p = pb.start();
    if (stdin != null) {
      p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    p.getOutputStream().close();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("kubectl %s ends", command).isTrue();
    // the client may be older than the server version it reads: not this test's business
    String stderr = Files.readString(err).lines().filter(l -> !l.startsWith("WARNING: version difference"))
        .reduce("", (a, b) -> a + b + "\n");
    return new Result(p.exitValue(), Files.readString(out), stderr);
  }

  private String ok(String... args) throws IOException, InterruptedException {
    Result r = kubectl(args);
    assertThat(r.exit()).as("kubectl %s: %s", String.join(" ", args), r.err()).isZero();
    return r.out();
  }

  private void createManifest() throws IOException, InterruptedException {
    Path manifest = Files.writeString(dir.resolve("manifest.yaml"), MANIFEST);
    assertThat(ok("create", "-f", manifest.toString())).contains("pod/web created", "configmap/settings created",
        "resourceslice.resource.k8s.io/node-a-gpu created");
  }

  @Test
  void versionAndApiResources() throws Exception {
    assertThat(ok("version", "-o", "json")).contains("\"gitVersion\": \"v1.34.0+nodelet\"");
    String resources = ok("api-resources");
    assertThat(resources.lines()).anySatisfy(l -> assertThat(l.split("\\s+"))
        .containsExactly("pods", "po", "v1", "true", "Pod"));
    assertThat(resources.lines()).anySatisfy(l -> assertThat(l.split("\\s+"))
        .containsExactly("resourceslices", "resource.k8s.io/v1", "false", "ResourceSlice"));
    // kubectl verified the server with the kubeconfig's CA and negotiated HTTP/2 by ALPN
    assertThat(Files.readString(kubeconfig)).contains("server: https://", "certificate-authority-data: ")
        .doesNotContain("insecure");
    assertThat(server.requestsByProtocol()).containsOnlyKeys("h2");
  }

  @Test
  void getPrintsWhatItPrintsAgainstACluster() throws Exception {
    createManifest();
    String wide = ok("get", "pods", "-o", "wide");
    assertThat(wide.lines().findFirst().orElseThrow().split("\\s{2,}"))
        .containsExactly("NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE",
            "READINESS GATES");
    assertThat(wide).containsPattern("web\\s+0/1\\s+Pending\\s+0\\s+\\d+s\\s+<none>\\s+node-a");
    assertThat(ok("get", "pods,configmaps,resourceslices")).contains("pod/web", "configmap/settings",
        "resourceslice.resource.k8s.io/node-a-gpu");
    assertThat(ok("get", "resourceslices")).containsPattern("node-a-gpu\\s+node-a\\s+gpu.example.com\\s+node-a");
    assertThat(ok("get", "pod", "web", "-o", "yaml")).contains("name: web", "nodeName: node-a",
        "resourceVersion:", "phase: Pending");
    assertThat(ok("get", "pods", "-l", "app=web", "-o", "name")).isEqualTo("pod/web\n");
    assertThat(kubectl("get", "pods", "-l", "app=db").err()).contains("No resources found in default namespace.");
    assertThat(ok("get", "pods", "--field-selector", "spec.nodeName=node-a", "-o", "name")).isEqualTo("pod/web\n");
    assertThat(ok("get", "pods", "--field-selector", "spec.nodeName=node-b", "-o", "name")).isEmpty();
    assertThat(ok("get", "namespaces", "-o", "name")).contains("namespace/default", "namespace/kube-system",
        "namespace/kube-public", "namespace/kube-node-lease");
    Result missing = kubectl("get", "pod", "nope");
    assertThat(missing.exit()).isNotZero();
    assertThat(missing.err()).contains("Error from server (NotFound): pods \"nope\" not found");
  }

  @Test
  void describeShowsTheObject() throws Exception {
    createManifest();
    String described = ok("describe", "pod", "web");
    assertThat(described).containsPattern("Name:\\s+web").containsPattern("Namespace:\\s+default")
        .containsPattern("Node:\\s+node-a").containsPattern("Labels:\\s+app=web")
        .containsPattern("Image:\\s+nginx:1.27").containsPattern("Status:\\s+Pending");
    assertThat(ok("describe", "configmap", "settings")).contains("mode:").contains("fast");
  }

  @Test
  void createApplyAndServerSideApply() throws Exception {
    createManifest();
    Path changed = Files.writeString(dir.resolve("changed.yaml"), MANIFEST.replace("\"fast\"", "\"slow\""));
    assertThat(ok("apply", "-f", changed.toString())).contains("configmap/settings configured");
    assertThat(ok("get", "configmap", "settings", "-o", "jsonpath={.data.mode}")).isEqualTo("slow");
    assertThat(ok("apply", "-f", changed.toString())).contains("configmap/settings unchanged");

    Path ssa = Files.writeString(dir.resolve("ssa.yaml"), """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: applied
        data:
          owner: kubectl
        """);
    assertThat(ok("apply", "--server-side", "-f", ssa.toString())).contains("configmap/applied serverside-applied");
    assertThat(ok("get", "configmap", "applied", "-o", "yaml", "--show-managed-fields"))
        .contains("manager: kubectl", "operation: Apply", "f:owner: {}");
    Path other = Files.writeString(dir.resolve("other.yaml"), Files.readString(ssa).replace("owner: kubectl",
        "owner: someone-else"));
    Result conflict = kubectl("apply", "--server-side", "--field-manager=other", "-f", other.toString());
    assertThat(conflict.exit()).isNotZero();
    assertThat(conflict.err()).contains("Apply failed with 1 conflict: conflict with \"kubectl\": .data.owner");
    assertThat(ok("apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", other.toString()))
        .contains("serverside-applied");
    assertThat(ok("get", "configmap", "applied", "-o", "jsonpath={.data.owner}")).isEqualTo("someone-else");

    Path typo = Files.writeString(dir.resolve("typo.yaml"), Files.readString(ssa).replace("data:", "dta:"));
    Result strict = kubectl("create", "-f", typo.toString());
    assertThat(strict.exit()).isNotZero();
    assertThat(strict.err()).contains("strict decoding error: unknown field \"dta\"");
  }

  @Test
  void patchLabelAnnotateAndDelete() throws Exception {
    createManifest();
    ok("patch", "pod", "web", "-p", "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx:1.28\"}]}}");
    assertThat(ok("get", "pod", "web", "-o", "jsonpath={.spec.containers[*].image}")).isEqualTo("nginx:1.28");
    ok("patch", "configmap", "settings", "--type", "merge", "-p", "{\"data\":{\"mode\":null,\"size\":\"2\"}}");
    assertThat(ok("get", "configmap", "settings", "-o", "jsonpath={.data}")).isEqualTo("{\"size\":\"2\"}");
    ok("patch", "configmap", "settings", "--type", "json", "-p",
        "[{\"op\":\"replace\",\"path\":\"/data/size\",\"value\":\"3\"}]");
    assertThat(ok("get", "configmap", "settings", "-o", "jsonpath={.data.size}")).isEqualTo("3");
    ok("patch", "resourceslice", "node-a-gpu", "--type", "merge", "-p",
        "{\"spec\":{\"pool\":{\"generation\":2}}}");
    assertThat(ok("get", "resourceslice", "node-a-gpu", "-o", "jsonpath={.metadata.generation}")).isEqualTo("2");

    assertThat(ok("label", "pod", "web", "tier=front")).contains("pod/web labeled");
    assertThat(ok("annotate", "pod", "web", "note=hello")).contains("pod/web annotated");
    assertThat(ok("get", "pod", "web", "--show-labels")).contains("app=web,tier=front");
    ok("label", "pod", "web", "tier-");
    ok("annotate", "pod", "web", "note-");
    assertThat(ok("get", "pod", "web", "-o", "jsonpath={.metadata.labels}")).isEqualTo("{\"app\":\"web\"}");
    assertThat(ok("get", "pod", "web", "-o", "jsonpath={.metadata.annotations}")).isEmpty();

    assertThat(ok("delete", "configmap", "settings")).contains("configmap \"settings\" deleted");
    // a pod bound to a node is only marked: kubectl waits until the node, having stopped it, deletes it with grace 0
    try (KubernetesClient node = server.newClient()) {
      java.util.concurrent.CompletableFuture<String> marked = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
        var pod = node.pods().inNamespace("default").withName("web");
        await().atMost(Duration.ofSeconds(30)).until(() -> pod.get().getMetadata().getDeletionTimestamp() != null);
        String grace = String.valueOf(pod.get().getMetadata().getDeletionGracePeriodSeconds());
        pod.withGracePeriod(0).delete();
        return grace;
      });
      assertThat(ok("delete", "pod", "web")).contains("pod \"web\" deleted");
      assertThat(marked.get(30, TimeUnit.SECONDS)).isEqualTo("30");
    }
    assertThat(kubectl("get", "pod", "web").err()).contains("NotFound");
    assertThat(ok("create", "secret", "generic", "token", "--from-literal=user=admin")).contains("secret/token");
    assertThat(ok("get", "secret", "token", "-o", "jsonpath={.type} {.data.user}")).isEqualTo("Opaque YWRtaW4=");
  }

  @Test
  void serverDryRunChangesNothing() throws Exception {
    createManifest();
    ok("create", "secret", "generic", "token", "--from-literal=user=admin");
    long before = server.resourceVersion();
    assertThat(ok("delete", "configmap", "settings", "--dry-run=server"))
        .contains("configmap \"settings\" deleted (server dry run)");
    assertThat(ok("delete", "secret", "token", "--dry-run=server")).contains("deleted (server dry run)");
    assertThat(ok("create", "configmap", "dry", "--from-literal=a=b", "--dry-run=server"))
        .contains("configmap/dry created (server dry run)");
    ok("label", "configmap", "settings", "tier=x", "--dry-run=server");
    assertThat(ok("get", "configmap,secret", "-o", "name")).contains("configmap/settings", "secret/token")
        .doesNotContain("configmap/dry");
    assertThat(ok("get", "configmap", "settings", "-o", "jsonpath={.metadata.labels}")).isEmpty();
    assertThat(server.resourceVersion()).isEqualTo(before);
    ok("create", "configmap", "wet");
    assertThat(ok("get", "configmap", "wet", "-o", "jsonpath={.metadata.resourceVersion}"))
        .isEqualTo(String.valueOf(before + 1));
  }

  @Test
  void aConfigMapOverOneMebibyteIsRefused() throws Exception {
    Path big = Files.writeString(dir.resolve("big.txt"), "x".repeat(1024 * 1024 + 1));
    Result refused = kubectl("create", "configmap", "big", "--from-file=" + big);
    assertThat(refused.exit()).isNotZero();
    assertThat(refused.err()).contains("ConfigMap \"big\" is invalid: []: Too long: must have at most 1048576 bytes");
  }

  @Test
  void createRawPostsAFileAsJson() throws Exception {
    Path raw = Files.writeString(dir.resolve("raw.json"),
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"raw\"},\"data\":{\"k\":\"v\"}}");
    assertThat(ok("create", "--raw", "/api/v1/namespaces/default/configmaps", "-f", raw.toString()))
        .contains("\"name\":\"raw\"");
    assertThat(ok("get", "configmap", "raw", "-o", "jsonpath={.data.k}")).isEqualTo("v");
  }

  @Test
  void anApplyConflictsWithTheManagerThatPatchedTheField() throws Exception {
    Path ssa = Files.writeString(dir.resolve("ssa.yaml"), """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: applied
        data:
          owner: kubectl
        """);
    ok("apply", "--server-side", "-f", ssa.toString());
    ok("patch", "configmap", "applied", "--type", "merge", "-p", "{\"data\":{\"owner\":\"patched\"}}");
    assertThat(ok("get", "configmap", "applied", "-o", "yaml", "--show-managed-fields"))
        .contains("manager: kubectl-patch", "operation: Update");
    Result conflict = kubectl("apply", "--server-side", "-f", ssa.toString());
    assertThat(conflict.exit()).isNotZero();
    assertThat(conflict.err()).contains("Apply failed with 1 conflict: conflict with \"kubectl-patch\" using v1: "
        + ".data.owner");
    ok("apply", "--server-side", "--force-conflicts", "-f", ssa.toString());
    assertThat(ok("get", "configmap", "applied", "-o", "jsonpath={.data.owner}")).isEqualTo("kubectl");
    assertThat(ok("get", "configmap", "applied", "-o", "jsonpath={.metadata.managedFields[*].manager}"))
        .isEqualTo("kubectl");
  }

  @Test
  void applyOfAListValidatesItsItemsOnTheClient() throws Exception {
    String list = """
        apiVersion: v1
        kind: List
        items:
        - apiVersion: v1
          kind: ConfigMap
          metadata: {name: listed}
          data: {a: "1"}
        """;
    Path good = Files.writeString(dir.resolve("list.yaml"), list);
    assertThat(ok("apply", "-f", good.toString())).contains("configmap/listed created");
    Path bad = Files.writeString(dir.resolve("bad.yaml"), list.replace("data:", "dta:"));
    Result refused = kubectl("apply", "-f", bad.toString());
    assertThat(refused.exit()).isNotZero();
    assertThat(refused.err()).contains("unknown field \"dta\" in io.k8s.api.core.v1.ConfigMap");
  }

  @Test
  void explainPrintsTheApiDescriptions() throws Exception {
    assertThat(ok("explain", "configmap")).contains("ConfigMap holds configuration data for pods to consume.")
        .contains("Data contains the configuration data.");
    assertThat(ok("explain", "pod.spec.containers.image")).contains("Container image name.");
  }

  @Test
  void getWatchSeesAChange() throws Exception {
    createManifest();
    ProcessBuilder pb = new ProcessBuilder(KUBECTL.orElseThrow().toString(), "get", "configmaps", "-w",
        "--output-watch-events");
    pb.environment().put("KUBECONFIG", kubeconfig.toString());
    pb.environment().put("HOME", dir.toString());
    pb.redirectError(ProcessBuilder.Redirect.DISCARD);
    Process watch = pb.start();
    List<String> lines = new CopyOnWriteArrayList<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(watch.getInputStream(),
          StandardCharsets.UTF_8))) {
        r.lines().forEach(lines::add);
      } catch (IOException e) {
        // the process was ended
      }
    });
    reader.start();
    try (KubernetesClient client = server.newClient()) {
      await().atMost(Duration.ofSeconds(30)).until(() -> lines.stream().anyMatch(l -> l.contains("settings")));
      client.configMaps().inNamespace("default").withName("settings")
          .edit(cm -> { cm.getData().put("more", "1"); return cm; });
      await().atMost(Duration.ofSeconds(30)).until(() -> lines.stream()
          .anyMatch(l -> l.matches("MODIFIED\\s+settings\\s+2\\s+.*")));
    } finally {
      watch.destroy();
      watch.waitFor(10, TimeUnit.SECONDS);
      reader.join(10_000);
    }
    assertThat(lines.get(0).split("\\s{2,}")).containsExactly("EVENT", "NAME", "DATA", "AGE");
  }
}
