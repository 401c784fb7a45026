package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kubelet's events of a pod's containers, written to the API server as {@code kubectl describe pod} shows them. */
class PodEventsTest {

  @TempDir
  Path dir;
  PodsHarness h;

  @BeforeEach
  void start() throws Exception {
    h = new PodsHarness(dir);
  }

  @AfterEach
  void stop() throws Exception {
    h.close();
  }

  private List<Event> events(String pod) {
    return h.client.v1().events().inNamespace("default").withField("involvedObject.name", pod).list().getItems();
  }

  private List<String> reasons(String pod) {
    return events(pod).stream().sorted(java.util.Comparator.comparing(e -> e.getMetadata().getName()))
        .map(e -> e.getReason() + " " + e.getMessage()).toList();
  }

  private Event event(String pod, String reason) {
    return events(pod).stream().filter(e -> e.getReason().equals(reason)).findFirst().orElseThrow();
  }

  @Test
  void aStartedContainerHasTheKubeletsEventsAndItsDeletionKilling() throws Exception {
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    Pod pod = h.run(PodLifecycleTest.pod("p", "mvn:org.example/hello/1.0.0"));
    await().atMost(Duration.ofSeconds(30)).until(() -> events("p").size() == 4);
    assertThat(reasons("p")).hasSize(4).satisfiesExactly(
        e -> assertThat(e).isEqualTo("Pulling Pulling image \"mvn:org.example/hello/1.0.0\""),
        e -> assertThat(e)
            .matches("Pulled Successfully pulled image \"mvn:org\\.example/hello/1\\.0\\.0\" in [0-9.]+s"),
        e -> assertThat(e).isEqualTo("Created Created container: c0"),
        e -> assertThat(e).isEqualTo("Started Started container c0"));
    Event started = event("p", "Started");
    assertThat(started.getType()).isEqualTo("Normal");
    assertThat(started.getInvolvedObject().getKind()).isEqualTo("Pod");
    assertThat(started.getInvolvedObject().getUid()).isEqualTo(pod.getMetadata().getUid());
    assertThat(started.getInvolvedObject().getResourceVersion()).isNotEmpty();
    assertThat(started.getInvolvedObject().getFieldPath()).isEqualTo("spec.containers{c0}");
    assertThat(started.getSource().getComponent()).isEqualTo("nodelet");
    assertThat(started.getSource().getHost()).isEqualTo(PodsHarness.NODE);
    assertThat(started.getReportingComponent()).isEqualTo("nodelet");
    assertThat(started.getReportingInstance()).isEqualTo(PodsHarness.NODE);
    assertThat(started.getCount()).isEqualTo(1);
    assertThat(started.getFirstTimestamp()).isEqualTo("2026-11-28T10:00:00Z");

    h.client.pods().inNamespace("default").withName("p").delete();
    Pod marked = h.client.pods().inNamespace("default").withName("p").get();
    h.runtime.podUpdated(marked);
    h.idle();
    await().atMost(Duration.ofSeconds(30)).until(() -> events("p").stream()
        .anyMatch(e -> e.getReason().equals("Killing") && e.getMessage().equals("Stopping container c0")));
  }

  @Test
  void aRepeatedEventIsCountedOnOneObject() throws Exception {
    h.run(PodLifecycleTest.pod("p", "mvn:org.example/missing/1.0.0"));
    h.feed("p");
    h.clock.advance(Duration.ofSeconds(2));
    h.feed("p");
    await().atMost(Duration.ofSeconds(30)).until(() -> events("p").stream()
        .anyMatch(e -> e.getReason().equals("BackOff") && e.getCount() >= 2
            && e.getLastTimestamp().equals("2026-11-28T10:00:02Z")));
    Event backOff = event("p", "BackOff");
    assertThat(backOff.getMessage()).isEqualTo("Back-off pulling image \"mvn:org.example/missing/1.0.0\"");
    assertThat(backOff.getFirstTimestamp()).isEqualTo("2026-11-28T10:00:00Z");
    assertThat(backOff.getLastTimestamp()).isEqualTo("2026-11-28T10:00:02Z");
    assertThat(events("p")).filteredOn(e -> e.getReason().equals("BackOff")).hasSize(1);
    Event failed = event("p", "Failed");
    assertThat(failed.getType()).isEqualTo("Warning");
    assertThat(failed.getMessage()).startsWith("Failed to pull image \"mvn:org.example/missing/1.0.0\": ")
        .contains("not found");
  }

  @Test
  void aMissingSecretIsAFailedEventThatNamesItAndAMissingVolumeObjectFailedMount() throws Exception {
    h.client.secrets().inNamespace("default").resource(new io.fabric8.kubernetes.api.model.SecretBuilder()
        .withNewMetadata().withName("creds").endMetadata().addToStringData("other", "s3cr3t-value").build())
        .create();
    Pod env = new PodBuilder(PodLifecycleTest.pod("env", "mvn:org.example/hello/1.0.0")).editSpec()
        .editFirstContainer().addNewEnv().withName("PASSWORD").withNewValueFrom().withNewSecretKeyRef()
        .withName("creds").withKey("password").endSecretKeyRef().endValueFrom().endEnv().endContainer()
        .endSpec().build();
    h.run(env);
    Pod mount = new PodBuilder(PodLifecycleTest.pod("mount", "mvn:org.example/hello/1.0.0")).editSpec()
        .addNewVolume().withName("conf").withNewConfigMap().withName("absent").endConfigMap().endVolume()
        .endSpec().build();
    h.run(mount);
    await().atMost(Duration.ofSeconds(30)).until(() -> events("env").stream()
        .anyMatch(e -> e.getReason().equals("Failed")) && events("mount").stream()
        .anyMatch(e -> e.getReason().equals("FailedMount")));
    Event failed = event("env", "Failed");
    assertThat(failed.getMessage()).startsWith("Error: ").contains("creds").contains("password")
        .doesNotContain("s3cr3t-value");
    assertThat(failed.getInvolvedObject().getFieldPath()).isEqualTo("spec.containers{c0}");
    Event failedMount = event("mount", "FailedMount");
    assertThat(failedMount.getType()).isEqualTo("Warning");
    assertThat(failedMount.getMessage()).contains("volume \"conf\"").contains("absent");
    assertThat(failedMount.getInvolvedObject().getFieldPath()).isNull();
  }

  @Test
  void kubectlDescribePodShowsThem() throws Exception {
    Optional<Path> kubectl = Arrays.stream(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
        .map(d -> Path.of(d, "kubectl")).filter(Files::isExecutable).findFirst();
    Assumptions.assumeTrue(kubectl.isPresent(), "kubectl is not on the PATH");
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    h.run(PodLifecycleTest.pod("p", "mvn:org.example/hello/1.0.0"));
    await().atMost(Duration.ofSeconds(30)).until(() -> events("p").size() == 4);
    Path kubeconfig = h.server.writeKubeconfig(dir.resolve("kubeconfig"));
    ProcessBuilder pb = new ProcessBuilder(kubectl.get().toString(), "describe", "pod", "p");
    pb.environment().put("KUBECONFIG", kubeconfig.toString());
    pb.environment().put("HOME", dir.toString());
    Path out = dir.resolve("out");
    pb.redirectOutput(out.toFile()).redirectError(dir.resolve("err").toFile());
    Process process = pb.start();
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(Files.readString(dir.resolve("err"))).isZero();
    String described = Files.readString(out, StandardCharsets.UTF_8);
    assertThat(described).contains("Events:").containsPattern("Normal\\s+Pulling\\s+.*nodelet\\s+Pulling image")
        .containsPattern("Normal\\s+Started\\s+.*Started container c0");
  }
}
