package dev.nodelet.store.watch.persistence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.kube.KubeClients;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.testing.Resources;
import dev.nodelet.persistence.Persistence;
import dev.nodelet.persistence.PersistenceOptions;
import dev.nodelet.persistence.StoredObject;
import dev.nodelet.store.watch.WatchStoreStrategy;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node with persistence killed with SIGKILL (a forked JVM running {@link PersistentNode}), then started again in
 * this JVM while the embedded API server is stopped, then reconnected to it: every stored object is served from disk,
 * and each change made meanwhile is resolved by resuming the watches, without a LIST.
 */
class KilledNodeRestartTest {

  private static final String NS = "edge";
  private static final String NODE = "edge-node-1";
  private static final String SECRET_VALUE = "edge-secret-4d1f9a7c2b6e8053";
  private static final String CHANGED_SECRET_VALUE = "edge-secret-changed-91b3c5e7";

  @TempDir
  Path dir;

  private EmbeddedApiServer api;
  private KubernetesClient admin;
  private Process node;

  @BeforeEach
  void startApiServer() {
    // bookmarks every 200 ms: an unchanged object is confirmed quickly after the reconnection
    api = EmbeddedApiServer.builder().bookmarkInterval(Duration.ofMillis(200)).build().start();
    admin = api.newClient();
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (node != null) {
      node.destroyForcibly().waitFor();
    }
    admin.close();
    api.close();
  }

  @Test
  void aKilledNodeServesEveryStoredObjectOfflineAndResumesWithoutAList() throws Exception {
    for (String name : List.of("same", "changed", "deleted", "recreated")) {
      admin.configMaps().inNamespace(NS).resource(configMap(name, "v1")).create();
    }
    admin.secrets().inNamespace(NS).resource(secret("credentials", SECRET_VALUE)).create();
    String recreatedUid = uid("recreated");
    Path key = keyFile();
    Path store = dir.resolve("store");

    node = startNode(store, key, "configmaps/same", "configmaps/changed", "configmaps/deleted",
        "configmaps/recreated", "secrets/credentials");
    node.destroyForcibly().waitFor(30, TimeUnit.SECONDS);

    // no Secret value reaches the disk in clear, in any encoding
    assertNoneInFiles(store, SECRET_VALUE);

    // while the node is down
    admin.configMaps().inNamespace(NS).withName("changed").edit(c -> { c.getData().put("v", "v2"); return c; });
    admin.configMaps().inNamespace(NS).withName("deleted").delete();
    await().until(() -> admin.configMaps().inNamespace(NS).withName("deleted").get() == null);
    admin.configMaps().inNamespace(NS).withName("recreated").delete();
    await().until(() -> admin.configMaps().inNamespace(NS).withName("recreated").get() == null);
    admin.configMaps().inNamespace(NS).resource(configMap("recreated", "v9")).create();
    admin.secrets().inNamespace(NS).withName("credentials").edit(s -> secret("credentials", CHANGED_SECRET_VALUE));
    api.stop();

    long listsBefore = lists();
    // the first run listed each object once; the restarted one must not
    assertThat(listsBefore).isEqualTo(5);
    try (RestartedNode restarted = new RestartedNode(store, key)) {
      ObjectStore<ConfigMap> configMaps = restarted.strategy.createStore(ResourceType.CONFIG_MAPS);
      ObjectStore<Secret> secrets = restarted.strategy.createStore(ResourceType.SECRETS);

      // the API server is down: every stored object is served, marked as from disk
      for (String name : List.of("same", "changed", "deleted", "recreated")) {
        assertThat(configMaps.get(NS, name).getData()).containsEntry("v", "v1");
        assertThat(configMaps.state(NS, name)).contains(ObjectState.FROM_DISK);
      }
      assertThat(value(secrets.get(NS, "credentials"))).isEqualTo(SECRET_VALUE);
      assertThat(secrets.state(NS, "credentials")).contains(ObjectState.FROM_DISK);
      // a pod registering again works as usual
      configMaps.addReference(NS, "same", "pod-1");
      configMaps.addReference(NS, "same", "pod-2");
      assertThat(configMaps.get(NS, "same").getData()).containsEntry("v", "v1");

      api.start();
      // "recreated" is not found between the DELETED and the ADDED event of its resumed watch
      await().atMost(Duration.ofSeconds(20)).ignoreException(ObjectNotFoundException.class).untilAsserted(() -> {
        assertThat(configMaps.get(NS, "changed").getData()).containsEntry("v", "v2");
        assertThatThrownBy(() -> configMaps.get(NS, "deleted")).isInstanceOf(ObjectNotFoundException.class);
        ConfigMap recreated = configMaps.get(NS, "recreated");
        assertThat(recreated.getMetadata().getUid()).isNotEqualTo(recreatedUid);
        assertThat(recreated.getData()).containsEntry("v", "v9");
        assertThat(value(secrets.get(NS, "credentials"))).isEqualTo(CHANGED_SECRET_VALUE);
        // the unchanged object is confirmed by a bookmark
        for (String name : List.of("same", "changed", "recreated")) {
          assertThat(configMaps.state(NS, name)).contains(ObjectState.RUNNING);
        }
        assertThat(secrets.state(NS, "credentials")).contains(ObjectState.RUNNING);
      });
      // every watch resumed from its stored resourceVersion
      assertThat(lists()).isEqualTo(listsBefore);
    }
    assertNoneInFiles(store, SECRET_VALUE, CHANGED_SECRET_VALUE);
  }

  @Test
  void aKillDuringABurstOfUpdatesLeavesAStoreThatOpens() throws Exception {
    admin.configMaps().inNamespace(NS).resource(configMap("burst", "0")).create();
    Path key = keyFile();
    Path store = dir.resolve("store");
    node = startNode(store, key, "configmaps/burst");
    int updates = 400;
    for (int i = 1; i <= updates; i++) {
      String value = Integer.toString(i);
      admin.configMaps().inNamespace(NS).withName("burst").edit(c -> { c.getData().put("v", value); return c; });
      if (i == updates / 2) {
        node.destroyForcibly();
      }
    }
    node.waitFor(30, TimeUnit.SECONDS);

    try (Persistence persistence = Persistence.open(PersistenceOptions.of(store, NODE, key))) {
      List<StoredObject<ConfigMap>> stored = persistence.store(ResourceType.CONFIG_MAPS).load();
      assertThat(stored).singleElement().satisfies(s ->
          assertThat(Integer.parseInt(s.object().getData().get("v"))).isBetween(0, updates));
    }
    try (Stream<Path> files = Files.list(store)) {
      assertThat(files.map(f -> f.getFileName().toString())).noneMatch(f -> f.contains(".corrupt-"));
    }
    // and the restarted node catches up by resuming
    long listsBefore = lists();
    try (RestartedNode restarted = new RestartedNode(store, key)) {
      ObjectStore<ConfigMap> configMaps = restarted.strategy.createStore(ResourceType.CONFIG_MAPS);
      await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
          assertThat(configMaps.get(NS, "burst").getData()).containsEntry("v", Integer.toString(updates)));
    }
    assertThat(lists()).isEqualTo(listsBefore);
  }

  @Test
  void aStoredVersionTheApiServerNoLongerHasIsListedAgainOnce() throws Exception {
    api.close();
    // a history of 5 events: a few changes while the node is down make its stored version too old (410 Gone)
    api = EmbeddedApiServer.builder().historySize(5).build().start();
    admin.close();
    admin = api.newClient();
    admin.configMaps().inNamespace(NS).resource(configMap("old", "v1")).create();
    Path key = keyFile();
    Path store = dir.resolve("store");
    node = startNode(store, key, "configmaps/old");
    node.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    for (int i = 0; i < 10; i++) {
      admin.configMaps().inNamespace(NS).resource(configMap("other-" + i, "x")).create();
    }
    admin.configMaps().inNamespace(NS).withName("old").edit(c -> { c.getData().put("v", "v2"); return c; });

    long listsBefore = lists();
    try (RestartedNode restarted = new RestartedNode(store, key)) {
      ObjectStore<ConfigMap> configMaps = restarted.strategy.createStore(ResourceType.CONFIG_MAPS);
      await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
        assertThat(configMaps.get(NS, "old").getData()).containsEntry("v", "v2");
        assertThat(configMaps.state(NS, "old")).contains(ObjectState.RUNNING);
      });
    }
    assertThat(lists() - listsBefore).isEqualTo(1);
  }

  /** The killed node started again in this JVM over its store; closing it closes what it opened, the last first. */
  private final class RestartedNode implements AutoCloseable {

    private final Resources resources = new Resources();
    final WatchStoreStrategy strategy;

    RestartedNode(Path store, Path key) throws Exception {
      try {
        // the node's client, as Nodelet builds it (over plain HTTP: HTTP/1.1, one connection per watch)
        KubernetesClient client = resources.closeLater(KubeClients.builder().masterUrl(api.url()).build());
        // LIST then WATCH, as the first run: a sync would be a LIST the test counts. Retries at most 1 s apart:
        // however long the API server was down while this node started (the default backoff grows to 30 s with
        // it), the watches resume soon after it is back
        ReflectorEngine reflectors = resources.closeLater(ReflectorEngine.builder(client).watchList(false)
            .backoff(Duration.ofMillis(100), Duration.ofSeconds(1)).build());
        Persistence persistence = resources.closeLater(Persistence.open(PersistenceOptions.of(store, NODE, key)));
        strategy = resources.closeLater(WatchStoreStrategy.builder(client).reflectors(reflectors)
            .persistence(persistence).build());
      } catch (Exception e) {
        resources.close();
        throw e;
      }
    }

    @Override
    public void close() throws Exception {
      resources.close();
    }
  }

  private long lists() {
    return api.requestCount(Verb.LIST, "configmaps") + api.requestCount(Verb.LIST, "secrets");
  }

  private Process startNode(Path store, Path key, String... objects) throws IOException, InterruptedException {
    Path kubeconfig = api.writeKubeconfig(dir.resolve("kubeconfig"));
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), PersistentNode.class.getName(), kubeconfig.toString(),
        store.toString(), key.toString(), NODE, NS));
    command.addAll(List.of(objects));
    Process process = new ProcessBuilder(command).redirectError(dir.resolve("node.err").toFile()).start();
    CompletableFuture<Boolean> ready = CompletableFuture.supplyAsync(() -> {
      try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8))) {
        String line;
        while ((line = out.readLine()) != null) {
          if (line.equals("READY")) {
            return true;
          }
        }
        return false;
      } catch (IOException e) {
        return false;
      }
    });
    try {
      assertThat(ready.get(60, TimeUnit.SECONDS)).as("the node started; its errors: %s",
          dir.resolve("node.err")).isTrue();
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      process.destroyForcibly().waitFor();
      throw new AssertionError("the node did not start: " + Files.readString(dir.resolve("node.err")), e);
    }
    return process;
  }

  private Path keyFile() throws IOException {
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    Path key = dir.resolve("key");
    Files.write(key, bytes);
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    return key;
  }

  private String uid(String name) {
    return admin.configMaps().inNamespace(NS).withName(name).get().getMetadata().getUid();
  }

  private static ConfigMap configMap(String name, String value) {
    return new ConfigMapBuilder().withNewMetadata().withNamespace(NS).withName(name).endMetadata()
        .addToData("v", value).build();
  }

  private static Secret secret(String name, String value) {
    return new SecretBuilder().withNewMetadata().withNamespace(NS).withName(name).endMetadata()
        .addToData("password", Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8))).build();
  }

  private static String value(Secret secret) {
    return new String(Base64.getDecoder().decode(secret.getData().get("password")), StandardCharsets.UTF_8);
  }

  /** Each value in clear, base64, base64url and hex, as the secrets tests look for them. */
  private static void assertNoneInFiles(Path store, String... values) throws IOException {
    Map<String, String> needles = new LinkedHashMap<>();
    for (String plain : values) {
      byte[] bytes = plain.getBytes(StandardCharsets.UTF_8);
      needles.put(plain, "clear");
      needles.put(Base64.getEncoder().withoutPadding().encodeToString(bytes), "base64");
      needles.put(Base64.getUrlEncoder().withoutPadding().encodeToString(bytes), "base64url");
      needles.put(HexFormat.of().formatHex(bytes), "hex");
    }
    try (Stream<Path> files = Files.list(store)) {
      List<Path> all = files.toList();
      assertThat(all).isNotEmpty();
      for (Path file : all) {
        String content = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
        needles.forEach((needle, encoding) ->
            assertThat(content).as("a Secret value (%s) in %s", encoding, file).doesNotContain(needle));
      }
    }
  }
}
