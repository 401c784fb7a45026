package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Dictionary;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.service.cm.Configuration;

/** env into Config Admin bound to the container's bundle, volumes with the atomic writer, following changes. */
class PodDeliveryTest {

  @TempDir
  Path dir;
  PodsHarness h;

  @BeforeEach
  void start() throws Exception {
    h = new PodsHarness(dir);
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    h.client.configMaps().inNamespace("default").resource(new ConfigMapBuilder().withNewMetadata()
        .withName("settings").endMetadata().addToData("greeting", "hello").addToData("color", "blue").build())
        .create();
    h.client.secrets().inNamespace("default").resource(new SecretBuilder().withNewMetadata().withName("creds")
        .endMetadata().addToStringData("password", "s3cr3t").build()).create();
  }

  @AfterEach
  void stop() throws Exception {
    h.close();
  }

  static Pod pod(String name, String literal) {
    return new PodBuilder().withNewMetadata().withName(name).withNamespace("default").endMetadata().withNewSpec()
        .addNewContainer().withName("app").withImage("mvn:org.example/hello/1.0.0")
        .addNewEnv().withName("LITERAL").withValue(literal).endEnv()
        .addNewEnv().withName("GREETING").withNewValueFrom().withNewConfigMapKeyRef().withName("settings")
        .withKey("greeting").endConfigMapKeyRef().endValueFrom().endEnv()
        .addNewEnv().withName("PASSWORD").withNewValueFrom().withNewSecretKeyRef().withName("creds")
        .withKey("password").endSecretKeyRef().endValueFrom().endEnv()
        .addNewEnv().withName("POD_NAME").withNewValueFrom().withNewFieldRef().withFieldPath("metadata.name")
        .endFieldRef().endValueFrom().endEnv()
        .addNewEnvFrom().withPrefix("CM_").withNewConfigMapRef().withName("settings").endConfigMapRef().endEnvFrom()
        .endContainer()
        .addNewVolume().withName("config").withNewConfigMap().withName("settings").addNewItem().withKey("greeting")
        .withPath("conf/greeting.txt").endItem().endConfigMap().endVolume()
        .addNewVolume().withName("secret").withNewSecret().withSecretName("creds").endSecret().endVolume()
        .endSpec().build();
  }

  private Dictionary<String, Object> configuration(String pod) throws Exception {
    Configuration[] bound = new ConfigDelivery(h.felix.configurationAdmin).bound("nodelet-pod:default/" + pod
        + "/app");
    assertThat(bound).hasSize(1);
    return bound[0].getProperties();
  }

  @Test
  void envBecomesOneConfigurationBoundToTheContainersBundleAndFollowsChanges() throws Exception {
    h.run(pod("p", "one"));
    assertThat(h.container("p", "app").getState().getRunning()).isNotNull();
    Configuration[] bound = new ConfigDelivery(h.felix.configurationAdmin).bound("nodelet-pod:default/p/app");
    assertThat(bound[0].getPid()).isEqualTo("dev.nodelet.pod.app|org.example.hello|1.0.0|nodelet-pod:default/p/app");
    Dictionary<String, Object> properties = configuration("p");
    assertThat(properties.get("LITERAL")).isEqualTo("one");
    assertThat(properties.get("GREETING")).isEqualTo("hello");
    // stored without the Secret's value, which the bundle receives from Nodelet's plugin (PodSecretsTest)
    assertThat(properties.get("PASSWORD")).isNull();
    assertThat((String[]) properties.get("nodelet.secrets")).containsExactly("PASSWORD");
    assertThat(properties.get("POD_NAME")).isEqualTo("p");
    assertThat(properties.get("CM_color")).isEqualTo("blue");
    assertThat(properties.get("nodelet.pod.namespace")).isEqualTo("default");
    assertThat(properties.get("nodelet.volume.config")).isEqualTo(h.work.resolve("pods").resolve(
        h.client.pods().inNamespace("default").withName("p").get().getMetadata().getUid())
        .resolve("volumes/config").toString());

    h.client.configMaps().inNamespace("default").withName("settings").edit(c -> {
      c.getData().put("greeting", "bonjour");
      return c;
    });
    h.runtime.objectChanged(false, "default", "settings");
    h.idle();
    assertThat(configuration("p").get("GREETING")).isEqualTo("bonjour");
    Path volume = Path.of((String) configuration("p").get("nodelet.volume.config"));
    assertThat(Files.readString(volume.resolve("conf/greeting.txt"))).isEqualTo("bonjour");
  }

  @Test
  void volumesAreWrittenWithTheAtomicWriterIntoAFolderOfTheNodeAlone() throws Exception {
    h.run(pod("p", "one"));
    Path podDir = Path.of((String) configuration("p").get("nodelet.pod.volumes")).getParent();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(podDir))).isEqualTo("rwx------");
    Path secret = podDir.resolve("volumes/secret");
    assertThat(Files.isSymbolicLink(secret.resolve("..data"))).isTrue();
    assertThat(Files.isSymbolicLink(secret.resolve("password"))).isTrue();
    assertThat(Files.readString(secret.resolve("password"))).isEqualTo("s3cr3t");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(secret.resolve("password"))))
        .isEqualTo("rw-r-----");
    Path config = podDir.resolve("volumes/config");
    assertThat(Files.readString(config.resolve("conf/greeting.txt"))).isEqualTo("hello");
    assertThat(Files.exists(config.resolve("color"))).isFalse(); // items select the keys
    assertThat(Serialization.asJson(h.status("p"))).doesNotContain("s3cr3t");

    Pod deleting = h.client.pods().inNamespace("default").withName("p").get();
    deleting.getMetadata().setDeletionTimestamp("2026-11-28T10:00:05Z");
    h.runtime.podUpdated(deleting);
    h.idle();
    assertThat(podDir).doesNotExist();
    assertThat(new ConfigDelivery(h.felix.configurationAdmin).bound("nodelet-pod:default/p/app")).isNull();
  }

  @Test
  void twoPodsOfOneBundleEachGetTheirOwnConfigurationUnderTheSamePid() throws Exception {
    h.run(pod("p", "one"));
    h.run(pod("q", "two"));
    assertThat(configuration("p").get("LITERAL")).isEqualTo("one");
    assertThat(configuration("q").get("LITERAL")).isEqualTo("two");
    Bundle p = h.felix.context().getBundle("nodelet-pod:default/p/app");
    Bundle q = h.felix.context().getBundle("nodelet-pod:default/q/app");
    assertThat(p.getBundleId()).isNotEqualTo(q.getBundleId());
    assertThat(h.container("q", "app").getState().getRunning()).isNotNull();
  }

  @Test
  void theAnnotationChoosesThePid() throws Exception {
    Pod pod = pod("p", "one");
    pod.getMetadata().getAnnotations().put("pods.nodelet.dev/pid.app", "org.example.greeter");
    h.run(pod);
    Configuration[] bound = new ConfigDelivery(h.felix.configurationAdmin).bound("nodelet-pod:default/p/app");
    assertThat(bound[0].getPid()).startsWith("org.example.greeter|org.example.hello|1.0.0|");
  }

  @Test
  void aMissingConfigMapIsCreateContainerConfigErrorUnlessOptional() throws Exception {
    Pod pod = new PodBuilder().withNewMetadata().withName("p").withNamespace("default").endMetadata().withNewSpec()
        .addNewContainer().withName("app").withImage("mvn:org.example/hello/1.0.0")
        .addNewEnv().withName("X").withNewValueFrom().withNewConfigMapKeyRef().withName("nothere").withKey("k")
        .endConfigMapKeyRef().endValueFrom().endEnv().endContainer().endSpec().build();
    h.run(pod);
    var waiting = h.container("p", "app").getState().getWaiting();
    assertThat(waiting.getReason()).isEqualTo("CreateContainerConfigError");
    assertThat(waiting.getMessage()).isEqualTo("configmap \"nothere\" not found");
    assertThat(h.felix.context().getBundle("nodelet-pod:default/p/app")).isNull();

    h.client.configMaps().inNamespace("default").resource(new ConfigMapBuilder().withNewMetadata()
        .withName("nothere").endMetadata().addToData("k", "v").build()).create();
    h.runtime.objectChanged(false, "default", "nothere");
    h.idle();
    assertThat(h.container("p", "app").getState().getRunning()).isNotNull();

    Pod optional = new PodBuilder().withNewMetadata().withName("q").withNamespace("default").endMetadata()
        .withNewSpec().addNewContainer().withName("app").withImage("mvn:org.example/hello/1.0.0")
        .addNewEnv().withName("X").withNewValueFrom().withNewConfigMapKeyRef().withName("absent").withKey("k")
        .withOptional(true).endConfigMapKeyRef().endValueFrom().endEnv().endContainer().endSpec().build();
    h.run(optional);
    assertThat(h.container("q", "app").getState().getRunning()).isNotNull();
    assertThat(configuration("q").get("X")).isNull();
  }

  @Test
  void aMissingVolumeObjectKeepsThePodInContainerCreating() throws Exception {
    Pod pod = new PodBuilder().withNewMetadata().withName("p").withNamespace("default").endMetadata().withNewSpec()
        .addNewContainer().withName("app").withImage("mvn:org.example/hello/1.0.0").endContainer()
        .addNewVolume().withName("v").withNewSecret().withSecretName("absent").endSecret().endVolume()
        .endSpec().build();
    h.run(pod);
    var waiting = h.container("p", "app").getState().getWaiting();
    assertThat(waiting.getReason()).isEqualTo("ContainerCreating");
    assertThat(waiting.getMessage()).isEqualTo("MountVolume.SetUp failed for volume \"v\": secret \"absent\" not found");
    assertThat(h.status("p").getConditions()).anySatisfy(c -> {
      assertThat(c.getType()).isEqualTo("PodReadyToStartContainers");
      assertThat(c.getStatus()).isEqualTo("False");
    });
  }

  @Test
  void secretValuesReachNoLogLineAndNoStatus() throws Exception {
    java.io.PrintStream err = System.err;
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
    try {
      h.run(pod("p", "one"));
      h.client.secrets().inNamespace("default").withName("creds").edit(secret -> {
        secret.setData(null);
        secret.setStringData(java.util.Map.of("other", "n0t-this-either"));
        return secret;
      });
      h.runtime.objectChanged(true, "default", "creds");
      h.idle();
    } finally {
      System.setErr(err);
    }
    String log = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
    assertThat(log).contains("nodelet-pod:default/p/app"); // the log was captured
    assertThat(log).doesNotContain("s3cr3t").doesNotContain("n0t-this-either");
    assertThat(Serialization.asJson(h.status("p"))).doesNotContain("s3cr3t").doesNotContain("n0t-this-either");
    // the key is gone: the running bundle keeps its last configuration, and the log says why without values
    assertThat(log).contains("couldn't find key password in Secret default/creds");
  }
}
