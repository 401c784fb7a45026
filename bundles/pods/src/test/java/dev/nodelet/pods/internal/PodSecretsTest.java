package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.cm.Configuration;

/**
 * Secret values of a container's {@code env}/{@code envFrom} reach its Declarative Services component (Felix SCR,
 * Felix Config Admin with its file persistence) but never Config Admin's storage, and an edited Secret reaches the
 * component's {@code modified}.
 */
class PodSecretsTest {

  private static final String SECRET = "s3cr3t-Value-4711";
  private static final String EDITED = "n3w-Value-0815";
  private static final String FROM = "fr0m-Value-2323";

  @TempDir
  Path dir;
  PodsHarness h;

  @BeforeEach
  void start() throws Exception {
    h = new PodsHarness(dir);
    h.felix.withDeclarativeServices();
    TestBundles.writeComponent(h.repository, "org.example", "component", "1.0.0", "dev.nodelet.pod.app",
        TestBundles.ConfiguredComponent.class);
    h.client.configMaps().inNamespace("default").resource(new ConfigMapBuilder().withNewMetadata()
        .withName("settings").endMetadata().addToData("greeting", "hello").build()).create();
    h.client.secrets().inNamespace("default").resource(new SecretBuilder().withNewMetadata().withName("creds")
        .endMetadata().addToStringData("password", SECRET).addToStringData("user", FROM).build()).create();
  }

  @AfterEach
  void stop() throws Exception {
    h.close();
  }

  static Pod pod(String name) {
    return new PodBuilder().withNewMetadata().withName(name).withNamespace("default").endMetadata().withNewSpec()
        .addNewContainer().withName("app").withImage("mvn:org.example/component/1.0.0")
        .addNewEnvFrom().withPrefix("S_").withNewSecretRef().withName("creds").endSecretRef().endEnvFrom()
        .addNewEnv().withName("GREETING").withNewValueFrom().withNewConfigMapKeyRef().withName("settings")
        .withKey("greeting").endConfigMapKeyRef().endValueFrom().endEnv()
        .addNewEnv().withName("PASSWORD").withNewValueFrom().withNewSecretKeyRef().withName("creds")
        .withKey("password").endSecretKeyRef().endValueFrom().endEnv()
        // a literal replaces what envFrom took from the Secret: it is stored as any literal
        .addNewEnv().withName("S_user").withValue("literal").endEnv()
        .endContainer().endSpec().build();
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> received(String pod) throws Exception {
    Bundle bundle = h.felix.context().getBundle("nodelet-pod:default/" + pod + "/app");
    ServiceReference<?>[] found = bundle.getBundleContext().getServiceReferences(Supplier.class.getName(), null);
    if (found == null) {
      return Map.of();
    }
    Supplier<Map<String, Object>> component = (Supplier<Map<String, Object>>) bundle.getBundleContext()
        .getService(found[0]);
    try {
      return component.get();
    } finally {
      bundle.getBundleContext().ungetService(found[0]);
    }
  }

  /** Every file Config Admin wrote, as text. */
  private String stored() throws Exception {
    StringBuilder all = new StringBuilder();
    try (Stream<Path> files = Files.walk(h.storage.resolve("cm"))) {
      for (Path file : files.filter(Files::isRegularFile).toList()) {
        all.append(file).append('\n').append(new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1));
      }
    }
    return all.toString();
  }

  @Test
  void theComponentReceivesSecretValuesThatConfigAdminNeverStores() throws Exception {
    h.run(pod("p"));
    assertThat(h.container("p", "app").getState().getRunning()).isNotNull();
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> received("p").containsKey("PASSWORD"));
    Map<String, Object> received = received("p");
    assertThat(received).containsEntry("PASSWORD", SECRET).containsEntry("S_password", SECRET)
        .containsEntry("S_user", "literal").containsEntry("GREETING", "hello").containsEntry("test.modified", 0);
    assertThat((String[]) received.get("nodelet.secrets")).containsExactly("PASSWORD", "S_password");

    String stored = stored();
    assertThat(stored).contains("GREETING").contains("nodelet.secrets"); // the configuration's file was read
    assertThat(stored).doesNotContain(SECRET);
    Configuration configuration = new ConfigDelivery(h.felix.configurationAdmin).bound("nodelet-pod:default/p/app")[0];
    assertThat(configuration.getProperties().get("PASSWORD")).isNull();
    assertThat(configuration.getProperties().get("S_user")).isEqualTo("literal");

    // an edited Secret reaches the component's modified, and still not the storage
    h.client.secrets().inNamespace("default").withName("creds").edit(secret -> {
      secret.setData(null);
      secret.setStringData(Map.of("password", EDITED, "user", FROM));
      return secret;
    });
    h.runtime.objectChanged(true, "default", "creds");
    h.idle();
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> EDITED.equals(received("p").get("PASSWORD")));
    assertThat(received("p")).containsEntry("S_password", EDITED);
    assertThat((Integer) received("p").get("test.modified")).isPositive();
    assertThat(stored()).doesNotContain(SECRET).doesNotContain(EDITED);
  }

  @Test
  void anotherBundleAskingForTheProcessedPropertiesGetsNoSecretValue() throws Exception {
    h.run(pod("p"));
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> received("p").containsKey("PASSWORD"));
    Configuration configuration = new ConfigDelivery(h.felix.configurationAdmin).bound("nodelet-pod:default/p/app")[0];
    Dictionary<String, Object> properties = new Hashtable<>();
    ServiceRegistration<Runnable> own = h.felix.context().registerService(Runnable.class, () -> { }, properties);
    try {
      Dictionary<String, Object> processed = configuration.getProcessedProperties(own.getReference());
      assertThat(processed.get("GREETING")).isEqualTo("hello");
      assertThat(processed.get("PASSWORD")).isNull();
      assertThat(processed.get("S_password")).isNull();
    } finally {
      own.unregister();
    }
  }

  @Test
  void aDeletedPodLeavesNoSecretValueBehind() throws Exception {
    h.run(pod("p"));
    String pid = new ConfigDelivery(h.felix.configurationAdmin).bound("nodelet-pod:default/p/app")[0].getPid();
    assertThat(h.secretValues.names(pid)).containsExactlyInAnyOrder("PASSWORD", "S_password");
    Pod deleting = h.client.pods().inNamespace("default").withName("p").get();
    deleting.getMetadata().setDeletionTimestamp("2026-11-28T10:00:05Z");
    h.runtime.podUpdated(deleting);
    h.idle();
    assertThat(h.secretValues.names(pid)).isEmpty();
    assertThat(stored()).doesNotContain(SECRET);
  }

  @Test
  void secretValuesReachNoEventAndNoStatus() throws Exception {
    Pod pod = pod("p");
    // a missing key: the message names the key and the Secret, never a value
    pod.getSpec().getContainers().get(0).getEnv().add(new io.fabric8.kubernetes.api.model.EnvVarBuilder()
        .withName("MISSING").withNewValueFrom().withNewSecretKeyRef().withName("creds").withKey("absent")
        .endSecretKeyRef().endValueFrom().build());
    h.run(pod);
    assertThat(h.container("p", "app").getState().getWaiting().getMessage())
        .isEqualTo("couldn't find key absent in Secret default/creds");
    String events = Serialization.asJson(h.client.v1().events().inNamespace("default").list());
    assertThat(events).contains("couldn't find key absent"); // the events were written
    assertThat(events).doesNotContain(SECRET).doesNotContain(FROM);
    assertThat(Serialization.asJson(h.status("p"))).doesNotContain(SECRET).doesNotContain(FROM);
    assertThat(List.of(h.podWrites().toString())).noneMatch(w -> w.contains(SECRET));
  }

  @Test
  void aComponentActivatedWhileNodeletWasAwayGetsItsSecretValuesOnceNodeletAdoptsThePod() throws Exception {
    h.run(pod("p"));
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> received("p").containsKey("PASSWORD"));
    // nodelet-pods stops (its plugin goes with it), and the pod's bundle starts again meanwhile, as after a restart
    // of the framework that starts the pods' bundles before nodelet-pods
    h.runtime.close();
    h.secretValues.close();
    Bundle bundle = h.felix.context().getBundle("nodelet-pod:default/p/app");
    bundle.stop();
    bundle.start();
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> received("p").containsKey("GREETING"));
    assertThat(received("p")).doesNotContainKey("PASSWORD").containsKey("nodelet.secrets");

    h.secretValues = new SecretValues().register(h.felix.context());
    h.runtime = h.newRuntime(110);
    h.feed("p");
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> SECRET.equals(received("p").get("PASSWORD")));
    assertThat((Integer) received("p").get("test.modified")).isPositive();
    assertThat(stored()).doesNotContain(SECRET);
  }
}
