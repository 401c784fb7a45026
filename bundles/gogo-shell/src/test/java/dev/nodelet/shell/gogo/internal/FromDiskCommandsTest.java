package dev.nodelet.shell.gogo.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.persistence.Persistence;
import dev.nodelet.persistence.PersistenceOptions;
import dev.nodelet.store.ttl.TtlStoreStrategy;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nodelet:objects} and {@code nodelet:pods --receipts} after a restart without the API server: the objects
 * read back from disk are listed as {@code from_disk} before any pod registers again, and a receipt says that the
 * copy served comes from disk, which version it is and why it may be stale. No Secret value is printed.
 */
class FromDiskCommandsTest {

  private static final String PASSWORD = "ZnJvbS1kaXNrLXZhbHVl"; // "from-disk-value"

  @TempDir
  Path dir;

  private EmbeddedApiServer server;
  private KubernetesClient client;
  private Path keyFile;

  @BeforeEach
  void start() throws Exception {
    server = EmbeddedApiServer.builder().build().start();
    client = server.newClient();
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    keyFile = Files.write(dir.resolve("key"), key);
    Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
    client.secrets().inNamespace("ns").resource(new SecretBuilder().withNewMetadata().withName("db").endMetadata()
        .addToData("password", PASSWORD).build()).create();
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  private static Pod pod() {
    return new PodBuilder().withNewMetadata().withNamespace("ns").withName("app").withUid("u1").endMetadata()
        .withNewSpec().addNewVolume().withName("s").withNewSecret().withSecretName("db").endSecret().endVolume()
        .endSpec().build();
  }

  private Persistence open() {
    return Persistence.open(PersistenceOptions.of(dir.resolve("store"), "node-1", keyFile));
  }

  @Test
  void objectsAndReceiptsShowWhatIsServedFromDisk() {
    Secret stored;
    try (Persistence persistence = open(); TtlStoreStrategy ttl = TtlStoreStrategy.builder(client)
        .persistence(persistence).build(); SwitchableObjectManager<Secret> secrets = ObjectManagers.secrets(client)
        .build()) {
      secrets.useStrategy("ttl", ttl);
      secrets.registerPod(pod());
      stored = secrets.get("ns", "db");
    }
    server.stop();

    ObjectCacheCommands commands = new ObjectCacheCommands();
    try (Persistence persistence = open(); TtlStoreStrategy ttl = TtlStoreStrategy.builder(client)
        .persistence(persistence).build(); SwitchableObjectManager<Secret> secrets = ObjectManagers.secrets(client)
        .build()) {
      secrets.useStrategy("ttl", ttl);
      commands.addManager(secrets, Map.of(ObjectManager.PID_PROPERTY, "dev.nodelet.secret"));
      assertThat(commands.objects()).isEqualTo("""
          RESOURCE  NAMESPACE  NAME  STRATEGY  STATE      REFERENCES  LAST-ACCESS
          secrets   ns         db    ttl       from_disk  1           never
          """);

      secrets.registerPod(pod());
      assertThat(secrets.get("ns", "db").getData()).containsEntry("password", PASSWORD);
      String receipts = commands.pods("--receipts");
      String line = receipts.lines().filter(l -> l.contains(" secrets ")).findFirst().orElseThrow();
      assertThat(line).contains("app", "db", stored.getMetadata().getUid(),
          " " + stored.getMetadata().getResourceVersion() + " ",
          "yes: served from the copy a previous run stored on disk, which the API server has not confirmed yet: "
              + "its last fetch failed");
      assertThat(commands.objects()).contains("secrets   ns         db    ttl       from_disk  1");
      assertThat(receipts + commands.objects()).doesNotContain(PASSWORD).doesNotContain("from-disk-value");
    }
  }
}
