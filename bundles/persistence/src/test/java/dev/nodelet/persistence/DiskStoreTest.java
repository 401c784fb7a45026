package dev.nodelet.persistence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.objectcache.ResourceType;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiskStoreTest {

  @TempDir
  Path dir;

  private PersistenceOptions options(String node) throws IOException {
    Path key = dir.resolve("key");
    if (!Files.exists(key)) {
      TestKeys.keyFile(dir, "key");
    }
    return PersistenceOptions.of(dir.resolve("store"), node, key);
  }

  static ConfigMap configMap(String name, String uid, String version, String value) {
    return new ConfigMapBuilder().withNewMetadata().withNamespace("ns").withName(name).withUid(uid)
        .withResourceVersion(version).endMetadata().addToData("k", value).build();
  }

  static Secret secret(String name, String value) {
    return new SecretBuilder().withNewMetadata().withNamespace("ns").withName(name).withUid("uid-" + name)
        .withResourceVersion("7").endMetadata()
        .addToData("password", Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8)))
        .addToStringData("token", value + "-token").build();
  }

  /** Stores an object the way a manager does: the pods' references first, then the object they reference. */
  static void putReferenced(DiskStore<ConfigMap> store, ConfigMap object, String... pods) {
    for (String pod : pods) {
      store.addReference("ns", object.getMetadata().getName(), pod);
    }
    store.put(object);
  }

  /** Opens the persistence of {@code options}, hands its ConfigMap store to {@code use} and closes it: one run. */
  static void withConfigMaps(PersistenceOptions options, Consumer<DiskStore<ConfigMap>> use) throws IOException {
    try (Persistence persistence = Persistence.open(options)) {
      use.accept(persistence.store(ResourceType.CONFIG_MAPS));
    }
  }

  /** Node node-a's ConfigMap store in one run, given to {@code before}, then in the next, given to {@code after}. */
  private void acrossARestart(Consumer<DiskStore<ConfigMap>> before, Consumer<DiskStore<ConfigMap>> after)
      throws IOException {
    PersistenceOptions options = options("node-a");
    withConfigMaps(options, before);
    withConfigMaps(options, after);
  }

  @Test
  void objectsAndReferencesSurviveAReopen() throws IOException {
    acrossARestart(store -> {
      putReferenced(store, configMap("a", "uid-a", "5", "one"), "pod-1", "pod-2");
      putReferenced(store, configMap("b", "uid-b", "6", "two"), "pod-1");
      store.put(configMap("b", "uid-b", "9", "three"));
      putReferenced(store, configMap("c", "uid-c", "4", "gone"), "pod-3");
      store.remove("ns", "c");
      putReferenced(store, configMap("d", "uid-d", "4", "unreferenced"), "pod-4");
      store.deleteReference("ns", "d", "pod-4");
      store.deleteReference("ns", "a", "pod-2");
    }, store -> assertThat(store.load()).extracting(s -> s.object().getMetadata().getName(),
        s -> s.object().getMetadata().getUid(), s -> s.object().getMetadata().getResourceVersion(),
        s -> s.object().getData().get("k"), StoredObject::podUids)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple("a", "uid-a", "5", "one", Set.of("pod-1")),
            org.assertj.core.groups.Tuple.tuple("b", "uid-b", "9", "three", Set.of("pod-1"))));
  }

  @Test
  void secretValuesAreNeverWrittenInClear() throws IOException {
    PersistenceOptions options = options("node-a").withEncryptConfigMaps(true);
    String secretValue = "s3cr3t-Value-9f2b41c7e0d84a6f";
    String configValue = "config-Value-77aa31bc90e2";
    try (Persistence persistence = Persistence.open(options)) {
      DiskStore<Secret> secrets = persistence.store(ResourceType.SECRETS);
      secrets.addReference("ns", "db", "pod-1");
      secrets.put(secret("db", secretValue));
      DiskStore<ConfigMap> configMaps = persistence.store(ResourceType.CONFIG_MAPS);
      configMaps.addReference("ns", "cfg", "pod-1");
      configMaps.put(configMap("cfg", "uid-cfg", "3", configValue));
    }
    Map<String, String> needles = needles(Map.of("secret data", secretValue, "secret stringData",
        secretValue + "-token", "encrypted config map data", configValue));
    try (Stream<Path> files = Files.list(options.directory())) {
      List<Path> all = files.toList();
      assertThat(all).isNotEmpty();
      for (Path file : all) {
        String content = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
        needles.forEach((needle, what) -> assertThat(content).as("%s in %s", what, file).doesNotContain(needle));
      }
    }
    try (Persistence persistence = Persistence.open(options)) {
      Secret back = persistence.store(ResourceType.SECRETS).load().get(0).object();
      assertThat(back.getStringData()).containsEntry("token", secretValue + "-token");
    }
  }

  /** Every value in clear and in every encoding the secrets tests look for: base64, base64url, hex. */
  static Map<String, String> needles(Map<String, String> values) {
    Map<String, String> needles = new LinkedHashMap<>();
    values.forEach((what, plain) -> {
      byte[] bytes = plain.getBytes(StandardCharsets.UTF_8);
      needles.put(plain, what);
      needles.put(Base64.getEncoder().withoutPadding().encodeToString(bytes), what + " (base64)");
      needles.put(Base64.getUrlEncoder().withoutPadding().encodeToString(bytes), what + " (base64url)");
      needles.put(HexFormat.of().formatHex(bytes), what + " (hex)");
    });
    return needles;
  }

  @Test
  void aKeyFileOpenToOthersIsRefusedNamingTheFileAndTheFix() throws IOException {
    PersistenceOptions options = options("node-a");
    Files.setPosixFilePermissions(options.keyFile(), PosixFilePermissions.fromString("rw-r--r--"));
    assertThatThrownBy(() -> Persistence.open(options)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(options.keyFile().toString()).hasMessageContaining("chmod 600")
        .hasMessageNotContaining("null");
    Files.setPosixFilePermissions(options.keyFile(), PosixFilePermissions.fromString("rw-r-----"));
    assertThatThrownBy(() -> Persistence.open(options)).hasMessageContaining("chmod 600");
    Files.setPosixFilePermissions(options.keyFile(), PosixFilePermissions.fromString("r--------"));
    Persistence.open(options).close();
  }

  @Test
  void aMissingOrMalformedKeyFileIsRefusedClearly() throws IOException {
    PersistenceOptions missing = PersistenceOptions.of(dir.resolve("store"), "node-a", dir.resolve("nokey"));
    assertThatThrownBy(() -> Persistence.open(missing)).hasMessageContaining("does not exist")
        .hasMessageContaining(dir.resolve("nokey").toString());
    Path bad = dir.resolve("badkey");
    Files.writeString(bad, "not a key");
    Files.setPosixFilePermissions(bad, PosixFilePermissions.fromString("rw-------"));
    assertThatThrownBy(() -> Persistence.open(PersistenceOptions.of(dir.resolve("store"), "node-a", bad)))
        .hasMessageContaining("holds no AES key").hasMessageContaining("32 bytes");
  }

  @Test
  void aBase64KeyFileWorks() throws IOException {
    Path key = dir.resolve("key64");
    Files.writeString(key, Base64.getEncoder().encodeToString(new byte[32]) + "\n");
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    try (Persistence persistence = Persistence.open(PersistenceOptions.of(dir.resolve("s"), "n", key))) {
      persistence.store(ResourceType.SECRETS).put(secret("x", "value"));
    }
  }

  @Test
  void aFileOfAnotherNodeIsMovedAsideAndTheStoreStartsEmpty() throws IOException {
    try (Persistence persistence = Persistence.open(options("node-a"))) {
      persistence.store(ResourceType.CONFIG_MAPS).put(configMap("a", "uid-a", "5", "one"));
    }
    try (Persistence persistence = Persistence.open(options("node-b"))) {
      assertThat(persistence.store(ResourceType.CONFIG_MAPS).load()).isEmpty();
    }
    assertThat(asideFiles()).hasSize(1);
    // the fresh file now belongs to node-b and opens without a move
    try (Persistence persistence = Persistence.open(options("node-b"))) {
      assertThat(persistence.store(ResourceType.CONFIG_MAPS).load()).isEmpty();
    }
    assertThat(asideFiles()).hasSize(1);
  }

  @Test
  void aFileWrittenWithAnotherKeyIsMovedAside() throws IOException {
    PersistenceOptions options = options("node-a");
    try (Persistence persistence = Persistence.open(options)) {
      persistence.store(ResourceType.SECRETS).put(secret("db", "value-one"));
    }
    Path otherKey = TestKeys.keyFile(dir, "other");
    try (Persistence persistence = Persistence.open(PersistenceOptions.of(options.directory(), "node-a",
        otherKey))) {
      assertThat(persistence.store(ResourceType.SECRETS).load()).isEmpty();
    }
    assertThat(asideFiles()).hasSize(1);
  }

  @Test
  void aDamagedFileIsMovedAsideNotACrash() throws IOException {
    PersistenceOptions options = options("node-a");
    Files.createDirectories(options.directory());
    byte[] garbage = new byte[64 * 1024];
    new java.util.Random(1).nextBytes(garbage);
    Files.write(options.directory().resolve("configmaps.mv"), garbage);
    withConfigMaps(options, store -> {
      assertThat(store.load()).isEmpty();
      store.put(configMap("a", "uid-a", "5", "one"));
    });
    assertThat(asideFiles()).hasSize(1);
    withConfigMaps(options, store -> assertThat(store.load()).hasSize(1));
  }

  @Test
  void overTheLimitOnlyObjectsOfRestoredPodsAreDroppedLeastRecentlyReferencedFirst() throws Exception {
    PersistenceOptions unlimited = options("node-a");
    try (Persistence persistence = Persistence.open(unlimited)) {
      DiskStore<ConfigMap> store = persistence.store(ResourceType.CONFIG_MAPS);
      for (String name : List.of("old", "newer", "kept")) {
        putReferenced(store, configMap(name, "uid-" + name, "1", "x".repeat(1000)), "pod-" + name);
        Thread.sleep(5); // distinct reference times
      }
    }
    withConfigMaps(unlimited.withMaxBytes(3_500), store -> {
      assertThat(store.load()).hasSize(3);
      // pod-kept registers again in this run: its object is current and never dropped
      store.addReference("ns", "kept", "pod-kept");
      putReferenced(store, configMap("fresh", "uid-fresh", "1", "y".repeat(1000)), "pod-fresh");
      assertThat(store.load()).extracting(s -> s.object().getMetadata().getName())
          .containsExactlyInAnyOrder("newer", "kept", "fresh");
      assertThat(store.storedBytes()).isLessThanOrEqualTo(3_500);
      store.put(configMap("kept", "uid-kept", "2", "z".repeat(3000)));
      // only current pods' objects are left, even though they are over the limit
      assertThat(store.load()).extracting(s -> s.object().getMetadata().getName())
          .containsExactlyInAnyOrder("kept", "fresh");
    });
  }

  @Test
  void restoredPodsThatDoNotRegisterAgainAreDroppedWithTheirObjects() throws IOException {
    acrossARestart(store -> {
      putReferenced(store, configMap("shared", "uid-s", "1", "s"), "pod-gone", "pod-back");
      putReferenced(store, configMap("only-gone", "uid-o", "1", "o"), "pod-gone");
    }, store -> {
      assertThat(store.load()).hasSize(2);
      store.addReference("ns", "shared", "pod-back");
      assertThat(store.dropRestoredPods()).isEqualTo(1);
      assertThat(store.load()).singleElement().satisfies(s -> {
        assertThat(s.object().getMetadata().getName()).isEqualTo("shared");
        assertThat(s.podUids()).containsExactly("pod-back");
      });
    });
  }

  @Test
  void aFileInUseIsRefusedAndNeverMovedAside() throws IOException {
    PersistenceOptions options = options("node-a");
    try (Persistence first = Persistence.open(options); Persistence second = Persistence.open(options)) {
      first.store(ResourceType.CONFIG_MAPS).put(configMap("a", "uid-a", "5", "one"));
      assertThatThrownBy(() -> second.store(ResourceType.CONFIG_MAPS)).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("in use").hasMessageContaining("configmaps.mv");
    }
    assertThat(asideFiles()).isEmpty();
    try (Persistence persistence = Persistence.open(options)) {
      assertThat(persistence.store(ResourceType.CONFIG_MAPS).load()).hasSize(1);
    }
  }

  @Test
  void aCommitPutsWhatWasWrittenOnDiskWithoutWaitingForTheCommitDelay() throws IOException {
    // an hour: no background commit during the test; the files copied stand for what a kill would leave
    PersistenceOptions options = options("node-a").withCommitDelay(Duration.ofHours(1));
    try (Persistence persistence = Persistence.open(options)) {
      DiskStore<ConfigMap> store = persistence.store(ResourceType.CONFIG_MAPS);
      store.put(configMap("a", "uid-a", "5", "one"));
      assertThat(loadAfterAKill(options, "before")).isEmpty();
      persistence.commit();
      assertThat(loadAfterAKill(options, "after")).singleElement()
          .satisfies(s -> assertThat(s.object().getData()).containsEntry("k", "one"));
    }
    Persistence closed = Persistence.open(options);
    closed.close();
    assertThatThrownBy(closed::commit).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
  }

  /** The ConfigMaps in a copy of the store's files as they are now on disk, opened as a restarted node would. */
  private List<StoredObject<ConfigMap>> loadAfterAKill(PersistenceOptions options, String copy) throws IOException {
    Path copied = Files.createDirectory(dir.resolve(copy));
    try (Stream<Path> files = Files.list(options.directory())) {
      for (Path file : files.toList()) {
        Files.copy(file, copied.resolve(file.getFileName()));
      }
    }
    try (Persistence restarted = Persistence.open(PersistenceOptions.of(copied, "node-a", options.keyFile()))) {
      return restarted.store(ResourceType.CONFIG_MAPS).load();
    }
  }

  private List<Path> asideFiles() throws IOException {
    try (Stream<Path> files = Files.list(dir.resolve("store"))) {
      return files.filter(f -> f.getFileName().toString().startsWith("configmaps.mv.corrupt-")
          || f.getFileName().toString().startsWith("secrets.mv.corrupt-")).toList();
    }
  }
}
