package dev.nodelet.store.ttl.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.configuration.RecordingPublisher;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.testing.FixedNodeIdentity;
import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.objectcache.testing.MutableClock;
import dev.nodelet.persistence.Persistence;
import dev.nodelet.persistence.PersistenceOptions;
import dev.nodelet.persistence.StoredObject;
import dev.nodelet.store.ttl.TtlStoreStrategy;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.util.converter.Converters;

/**
 * The ttl strategy with persistence, against the embedded API server stopped and started again: what a run fetched
 * is served by the next run while the API server is down, marked {@link ObjectState#FROM_DISK}, and replaced by what
 * the API server holds as soon as it answers; with the API server up, a stored copy is never served.
 */
class TtlPersistenceTest {

  private static final String NODE = "node-1";
  private static final Duration TTL = Duration.ofMinutes(1);
  private static final Duration GRACE = Duration.ofSeconds(30);

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();

  @TempDir
  Path dir;

  private final MutableClock clock = new MutableClock();
  private Path keyFile;

  @BeforeEach
  void key() throws IOException {
    keyFile = keyFile("rw-------");
    for (String name : List.of("a", "b", "c")) {
      api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
          .endMetadata().addToData("k", name + "-1").build()).create();
    }
    api.client().secrets().inNamespace("ns").resource(new SecretBuilder().withNewMetadata().withName("s")
        .endMetadata().addToData("password", Base64.getEncoder().encodeToString(
            "ttl-secret-value".getBytes(StandardCharsets.UTF_8))).build()).create();
  }

  private Path keyFile(String mode) throws IOException {
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    Path file = dir.resolve("key-" + mode.replace('-', '_'));
    Files.write(file, key);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
    return file;
  }

  private Persistence open() {
    return Persistence.open(PersistenceOptions.of(dir.resolve("store"), NODE, keyFile));
  }

  private TtlStoreStrategy strategy(Persistence persistence) {
    return TtlStoreStrategy.builder(api.client()).clock(clock).defaultTtl(TTL).persistence(persistence)
        .restoredReferenceGrace(GRACE).build();
  }

  /** A first run: pod-1 references a, b and c, pod-2 references a and the Secret; each is fetched once. */
  private void firstRun() {
    try (Persistence persistence = open(); TtlStoreStrategy strategy = strategy(persistence);
        ObjectStore<ConfigMap> configMaps = strategy.createStore(ResourceType.CONFIG_MAPS);
        ObjectStore<Secret> secrets = strategy.createStore(ResourceType.SECRETS)) {
      for (String name : List.of("a", "b", "c")) {
        configMaps.addReference("ns", name, "pod-1");
        assertThat(configMaps.get("ns", name).getData()).containsEntry("k", name + "-1");
      }
      configMaps.addReference("ns", "a", "pod-2");
      secrets.addReference("ns", "s", "pod-2");
      assertThat(secrets.get("ns", "s").getData()).containsKey("password");
    }
  }

  private static String data(ConfigMap object) {
    return object.getData().get("k");
  }

  @Test
  void aRestartWithoutTheApiServerServesEveryFetchedObjectFromDiskAndItsReturnReplacesThem() {
    firstRun();
    String uidOfC = api.client().configMaps().inNamespace("ns").withName("c").get().getMetadata().getUid();
    api.server().stop();

    try (Persistence persistence = open(); TtlStoreStrategy strategy = strategy(persistence);
        ObjectStore<ConfigMap> configMaps = strategy.createStore(ResourceType.CONFIG_MAPS);
        ObjectStore<Secret> secrets = strategy.createStore(ResourceType.SECRETS)) {
      // no pod has registered yet: the references read back serve the objects
      for (String name : List.of("a", "b", "c")) {
        assertThat(data(configMaps.get("ns", name))).isEqualTo(name + "-1");
        assertThat(configMaps.state("ns", name)).contains(ObjectState.FROM_DISK);
        assertThat(configMaps.staleness("ns", name)).hasValueSatisfying(reason -> assertThat(reason)
            .startsWith("its last fetch failed: "));
      }
      assertThat(new String(Base64.getDecoder().decode(secrets.get("ns", "s").getData().get("password")),
          StandardCharsets.UTF_8)).isEqualTo("ttl-secret-value");
      assertThat(secrets.state("ns", "s")).contains(ObjectState.FROM_DISK);
      // registering works as usual and keeps the copy from disk as the fallback
      configMaps.addReference("ns", "a", "pod-1");
      assertThat(data(configMaps.get("ns", "a"))).isEqualTo("a-1");
      assertThat(configMaps.state("ns", "a")).contains(ObjectState.FROM_DISK);

      // meanwhile: a changed, b deleted, c deleted and created again (another UID)
      api.server().start();
      api.client().configMaps().inNamespace("ns").withName("a").edit(cm -> {
        cm.getData().put("k", "a-2");
        return cm;
      });
      api.client().configMaps().inNamespace("ns").withName("b").delete();
      api.client().configMaps().inNamespace("ns").withName("c").delete();
      api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName("c")
          .endMetadata().addToData("k", "c-2").build()).create();

      // the copies from disk are not fresh: the next get fetches and what the API server holds replaces them
      assertThat(data(configMaps.get("ns", "a"))).isEqualTo("a-2");
      assertThat(configMaps.state("ns", "a")).isEmpty();
      assertThat(configMaps.staleness("ns", "a")).isEmpty();
      assertThatThrownBy(() -> configMaps.get("ns", "b")).isInstanceOf(ObjectNotFoundException.class);
      ConfigMap c = configMaps.get("ns", "c");
      assertThat(data(c)).isEqualTo("c-2");
      assertThat(c.getMetadata().getUid()).isNotEqualTo(uidOfC);
      assertThat(configMaps.state("ns", "c")).isEmpty();
    }

    // what the API server answered is what the disk holds now: b is gone, a and c are the new versions
    try (Persistence persistence = open()) {
      assertThat(persistence.store(ResourceType.CONFIG_MAPS).load()).extracting(StoredObject::object)
          .extracting(o -> o.getMetadata().getName() + "=" + data(o)).containsExactly("a=a-2", "c=c-2");
    }
  }

  @Test
  void withTheApiServerUpAStoredCopyIsNeverServed() {
    firstRun();
    api.client().configMaps().inNamespace("ns").withName("a").edit(cm -> {
      cm.getData().put("k", "a-2");
      return cm;
    });
    long gets = api.server().requestCount(Verb.GET, "configmaps");

    try (Persistence persistence = open(); TtlStoreStrategy strategy = strategy(persistence);
        ObjectStore<ConfigMap> configMaps = strategy.createStore(ResourceType.CONFIG_MAPS)) {
      assertThat(data(configMaps.get("ns", "a"))).isEqualTo("a-2");
      assertThat(configMaps.state("ns", "a")).isEmpty();
      // fetched once, then fresh for its TTL as usual
      assertThat(data(configMaps.get("ns", "a"))).isEqualTo("a-2");
      assertThat(api.server().requestCount(Verb.GET, "configmaps")).isEqualTo(gets + 1);
    }
  }

  @Test
  void restoredReferencesOfPodsThatDoNotRegisterAgainExpireAfterTheGraceOnceTheApiServerAnswered() {
    firstRun();
    try (Persistence persistence = open(); TtlStoreStrategy strategy = strategy(persistence);
        ObjectStore<ConfigMap> configMaps = strategy.createStore(ResourceType.CONFIG_MAPS)) {
      assertThat(configMaps.restoredObjects()).containsExactlyInAnyOrder(new ObjectStore.Restored("ns", "a", 2),
          new ObjectStore.Restored("ns", "b", 1), new ObjectStore.Restored("ns", "c", 1));
      // pod-2 registers again, pod-1 never does; the API server answers
      configMaps.addReference("ns", "a", "pod-2");
      assertThat(configMaps.restoredObjects()).containsExactlyInAnyOrder(new ObjectStore.Restored("ns", "b", 1),
          new ObjectStore.Restored("ns", "c", 1));
      assertThat(data(configMaps.get("ns", "a"))).isEqualTo("a-1");
      clock.advance(GRACE.minusSeconds(1));
      assertThat(data(configMaps.get("ns", "b"))).isEqualTo("b-1");
      clock.advance(Duration.ofSeconds(1));

      assertThatThrownBy(() -> configMaps.get("ns", "b")).isInstanceOf(NotRegisteredException.class);
      assertThatThrownBy(() -> configMaps.get("ns", "c")).isInstanceOf(NotRegisteredException.class);
      assertThat(data(configMaps.get("ns", "a"))).isEqualTo("a-1");
      assertThat(configMaps.restoredObjects()).isEmpty();
      // pod-2's reference is its own now: deleting it drops a
      configMaps.deleteReference("ns", "a", "pod-2");
      assertThatThrownBy(() -> configMaps.get("ns", "a")).isInstanceOf(NotRegisteredException.class);
    }
    try (Persistence persistence = open()) {
      assertThat(persistence.store(ResourceType.CONFIG_MAPS).load()).isEmpty();
    }
  }

  private static TtlStrategyConfiguration config(Map<String, Object> properties) {
    return Converters.standardConverter().convert(properties).to(TtlStrategyConfiguration.class);
  }

  /** What a component activated with the configuration waits for (its health check). */
  private String waits(Map<String, Object> properties) {
    return RecordingPublisher.waits(r -> new TtlStrategyComponent(r, api.client(), node, config(properties), Map.of()),
        TtlStrategyComponent::deactivate);
  }

  private final NodeIdentity node = FixedNodeIdentity.named(NODE);

  @Test
  void aDirectoryWithoutAKeyFileOrWithAKeyFileOpenToOthersIsRefusedNamingTheKey() throws IOException {
    String store = dir.resolve("store").toString();
    assertThat(waits(Map.of("persistence.dir", store))).contains("persistence.key.file: required");
    Path open = keyFile("rw-r--r--");
    assertThat(waits(Map.of("persistence.dir", store, "persistence.key.file",
        open.toString()))).contains("persistence.key.file: ")
        .contains(open.toString()).contains("chmod 600");
    assertThat(waits(Map.of("persistence.dir", store, "persistence.key.file", keyFile.toString(),
        "persistence.restored.grace.seconds", 0)))
        .contains("persistence.restored.grace.seconds: must be between 1 and 86400");
  }

  /**
   * Activates the component with {@code properties} and fetches ConfigMap a through a store, then reconfigures it
   * with {@code changed} and fetches b through a new store; closes both stores and deactivates the component.
   */
  private void fetchAThenReconfigureAndFetchB(Map<String, Object> properties, Map<String, Object> changed) {
    TtlStrategyComponent component = new TtlStrategyComponent(new RecordingPublisher(), api.client(), node,
        config(properties), Map.of());
    try {
      ObjectStore<ConfigMap> first = component.createStore(ResourceType.CONFIG_MAPS);
      first.addReference("ns", "a", "pod-1");
      assertThat(data(first.get("ns", "a"))).isEqualTo("a-1");
      component.modified(config(changed), Map.of());
      ObjectStore<ConfigMap> next = component.createStore(ResourceType.CONFIG_MAPS);
      next.addReference("ns", "b", "pod-1");
      assertThat(data(next.get("ns", "b"))).isEqualTo("b-1");
      first.close();
      next.close();
    } finally {
      component.deactivate();
    }
  }

  @Test
  void anotherDirectoryClosesTheOneBeforeAndTheNewStoresWriteToTheNewOne() {
    Path before = dir.resolve("before");
    Path after = dir.resolve("after");
    fetchAThenReconfigureAndFetchB(Map.of("persistence.dir", before.toString(),
        "persistence.key.file", keyFile.toString(), "use.node.ttl.annotation", false),
        Map.of("persistence.dir", after.toString(), "persistence.key.file", keyFile.toString(),
            "use.node.ttl.annotation", false));
    // both directories are closed (a file still open would be refused as in use) and each holds what its stores
    // fetched
    for (Map.Entry<Path, String> expected : Map.of(before, "a", after, "b").entrySet()) {
      try (Persistence persistence = Persistence.open(PersistenceOptions.of(expected.getKey(), NODE, keyFile))) {
        assertThat(persistence.store(ResourceType.CONFIG_MAPS).load()).extracting(StoredObject::object)
            .extracting(o -> o.getMetadata().getName()).containsExactly(expected.getValue());
      }
    }
  }

  @Test
  void aRestartedComponentServesWhatTheLastOneFetchedWhileTheApiServerIsDown() {
    Map<String, Object> properties = Map.of("persistence.dir", dir.resolve("store").toString(),
        "persistence.key.file", keyFile.toString(), "persistence.encrypt.configmaps", true,
        "use.node.ttl.annotation", false);
    // a change that keeps the persistence keys: the new stores share the open directory with the old ones
    fetchAThenReconfigureAndFetchB(properties, Map.of("persistence.dir", dir.resolve("store").toString(),
        "persistence.key.file", keyFile.toString(), "persistence.encrypt.configmaps", true,
        "use.node.ttl.annotation", false, "default.ttl.seconds", 120));

    api.server().stop();
    TtlStrategyComponent second = new TtlStrategyComponent(new RecordingPublisher(), api.client(), node,
        config(properties), Map.of());
    try {
      ObjectStore<ConfigMap> restored = second.createStore(ResourceType.CONFIG_MAPS);
      assertThat(data(restored.get("ns", "a"))).isEqualTo("a-1");
      assertThat(data(restored.get("ns", "b"))).isEqualTo("b-1");
      assertThat(restored.state("ns", "b")).contains(ObjectState.FROM_DISK);
    } finally {
      second.deactivate();
    }
  }
}
